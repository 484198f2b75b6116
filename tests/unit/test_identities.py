"""Who a commit's author is (``history.git.Identities``): one person stays one actor across their
addresses, their names and the fork their pull requests came from, and nobody takes the login of a
fork they only helped on or that many people share."""

from __future__ import annotations

from itertools import count

from neural_memory.history.git import Commit, Identities

_shas = count(1)


def _commit(author: str, email: str, message: str = "Change", parents: list[str] | None = None) -> Commit:
    at = "2024-01-01T00:00:00+00:00"
    return Commit(f"{next(_shas):040x}", parents or [], author, email, at, at, message)


def _merged(fork: str, number: int, head: Commit, by: Commit) -> Commit:
    """The merge of pull request ``number`` "from fork/branch", whose branch ends at ``head``."""
    message = f"Merge pull request #{number} from {fork}/branch-{number}"
    return _commit(by.author, by.email, message, parents=["0" * 40, head.sha])


MAINTAINER = ("Mia Park", "mia@project.example")


def test_an_address_written_under_two_names_is_one_person_known_by_the_more_frequent() -> None:
    commits = [_commit("Steven Loria", "sloria1@example.com") for _ in range(3)]
    commits.append(_commit("sloria", "sloria1@example.com"))
    who = Identities(commits)
    assert {who.of(c) for c in commits} == {"Steven Loria"}


def test_the_fork_a_persons_pull_requests_came_from_is_their_login_under_every_address_of_their_name() -> None:
    # Given Cory's two pull requests from his fork, each branch ending in his own commit
    heads = [_commit("Cory Benfield", "cory.b@example.org") for _ in range(2)]
    merges = [_merged("Lukasa", n, head, _commit(*MAINTAINER)) for n, head in enumerate(heads, 1)]
    direct = _commit("Cory Benfield", "cory.b@example.org")  # and a commit he pushed himself
    elsewhere = _commit("Cory Benfield", "cory@work.example")  # and one from his work address
    who = Identities([*heads, *merges, direct, elsewhere])
    # Then he is one actor, the login the pull requests name
    assert {who.of(c) for c in (*heads, direct, elsewhere)} == {"Lukasa"}
    # and whoever merged them is not
    assert who.of(merges[0]) == "Mia Park"


def test_a_maintainer_finishing_others_branches_does_not_take_their_logins() -> None:
    # Given a maintainer whose commits end the branches of three contributors' pull requests, two
    # of them Ann's, and who opened one pull request from her own fork
    mia = [_commit(*MAINTAINER) for _ in range(4)]
    forks = ["ann", "ann", "bo", "mpark"]
    merges = [_merged(fork, n, head, mia[0]) for n, (fork, head) in enumerate(zip(forks, mia, strict=True), 1)]
    who = Identities([*mia, *merges])
    # Then two votes of four are not enough for "ann"
    assert who.of(mia[0]) == "Mia Park"


def test_a_fork_many_people_write_or_the_owners_names_nobody() -> None:
    people = [("Ann Lee", "ann@example.org"), ("Bo Chen", "bo@example.org"), ("Cy Diaz", "cy@example.org")]
    # Given two pull requests each, by Ann, Bo and Cy, from a company's shared fork
    heads = [_commit(*person) for person in people for _ in range(2)]
    shared = [_merged("acme-corp", n, head, _commit(*MAINTAINER)) for n, head in enumerate(heads, 1)]
    # and two of Ann's from the project's own repository
    own = [_commit(*people[0]) for _ in range(2)]
    owners = [_merged("pallets", n, head, _commit(*MAINTAINER)) for n, head in enumerate(own, 10)]
    who = Identities([*heads, *shared, *own, *owners], owner="pallets")
    # Then each is still known by their own name
    assert [who.of(h) for h in heads[::2]] == ["Ann Lee", "Bo Chen", "Cy Diaz"]
    assert {who.of(c) for c in own} == {"Ann Lee"}


def test_a_login_the_history_already_gives_is_kept_over_a_fork_vote() -> None:
    # Given Jérôme, lafrech by his noreply address, sending two pull requests from his company's
    # fork with his work address
    noreply = _commit("Jérôme Lafréchoux", "lafrech@users.noreply.github.com")
    heads = [_commit("Jérôme Lafréchoux", "jerome@company.example") for _ in range(2)]
    merges = [_merged("Company", n, head, _commit(*MAINTAINER)) for n, head in enumerate(heads, 1)]
    who = Identities([noreply, *heads, *merges])
    # Then he stays lafrech under both addresses, not the company
    assert {who.of(c) for c in (noreply, *heads)} == {"lafrech"}
