"""Who a commit's author is (``history.identities.Identities``): one person stays one actor across their
addresses, their names and the fork their pull requests came from, and nobody takes the login of a
fork they only helped on or that many people share."""

from __future__ import annotations

from itertools import count

from neural_memory.local.history.git_log import Commit
from neural_memory.local.history.identities import Identities

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
    ann, bo, cy, dee = (("Ann Lee", "ann@example.org"), ("Bo Chen", "bo@example.org"),
                        ("Cy Diaz", "cy@example.org"), ("Dee Ray", "dee@example.org"))  # fmt: skip
    # Given a company's fork that three people send pull requests from, most of them Ann's
    heads = [_commit(*person) for person in (ann, ann, ann, bo, cy)]
    shared = [_merged("acme-corp", n, head, _commit(*MAINTAINER)) for n, head in enumerate(heads, 1)]
    # and Dee's two from the project's own repository
    own = [_commit(*dee) for _ in range(2)]
    owners = [_merged("pallets", n, head, _commit(*MAINTAINER)) for n, head in enumerate(own, 10)]
    who = Identities([*heads, *shared, *own, *owners], owner="pallets")
    # Then each is still known by their own name
    assert [who.of(h) for h in heads[2:]] == ["Ann Lee", "Bo Chen", "Cy Diaz"]
    assert {who.of(c) for c in own} == {"Dee Ray"}


def test_an_address_many_people_share_or_a_placeholder_is_nobodys() -> None:
    # Given one address five people committed under, another that is git's placeholder, and a
    # fork whose branches the placeholder wrote
    crowd = [_commit(name, "dev@lab.example") for name in ("fijal", "guido", "arigo", "cfbolz", "hpk", "hpk")]
    placeholder = [_commit("Your Name", "you@example.com"), _commit("Ann Lee", "you@example.com")]
    merges = [_merged("annlee", n, placeholder[1], _commit(*MAINTAINER)) for n in (1, 2)]
    unset = [_commit(name, "none@none") for name in ("Bo Chen", "Bo Chen", "Cy Diaz")]
    who = Identities([*crowd, *placeholder, *merges, *unset])
    # Then every commit keeps its author's own name
    assert [who.of(c) for c in crowd] == ["fijal", "guido", "arigo", "cfbolz", "hpk", "hpk"]
    assert [who.of(c) for c in placeholder] == ["Your Name", "Ann Lee"]
    assert [who.of(c) for c in unset] == ["Bo Chen", "Bo Chen", "Cy Diaz"]


def test_an_address_is_its_most_frequent_names_not_a_rare_one_that_has_a_login() -> None:
    # Given Mia's address, once under Bo's name (a commit she made on his machine), and Bo's login
    mia = [_commit(*MAINTAINER) for _ in range(5)]
    borrowed = _commit("Bo Chen", MAINTAINER[1])
    bo = _commit("Bo Chen", "bochen@users.noreply.github.com")
    who = Identities([*mia, borrowed, bo])
    # Then her commits stay hers
    assert {who.of(c) for c in mia} == {"Mia Park"}


def test_a_login_the_history_already_gives_is_kept_over_a_fork_vote() -> None:
    # Given Jérôme, lafrech by his noreply address, sending two pull requests from his company's
    # fork with his work address
    noreply = _commit("Jérôme Lafréchoux", "lafrech@users.noreply.github.com")
    heads = [_commit("Jérôme Lafréchoux", "jerome@company.example") for _ in range(2)]
    merges = [_merged("Company", n, head, _commit(*MAINTAINER)) for n, head in enumerate(heads, 1)]
    who = Identities([noreply, *heads, *merges])
    # Then he stays lafrech under both addresses, not the company
    assert {who.of(c) for c in (noreply, *heads)} == {"lafrech"}


def test_a_maintainer_who_finished_a_contributors_branches_does_not_become_them() -> None:
    # Given two pull requests from Cory's fork, one and two of his commits with the maintainer's
    # fix-up on top (her commit heads the branch; one of each is a tie, and the branch is his)
    branches = []
    for size in (1, 2):
        own = [_commit("Cory Benfield", "cory.b@example.org")]
        own += [_commit("Cory Benfield", "cory.b@example.org", parents=[own[-1].sha]) for _ in range(size - 1)]
        branches.append([*own, _commit(*MAINTAINER, parents=[own[-1].sha])])
    # and two more there that only she wrote (she pushed them to his fork), while Cory sent four
    branches += [[_commit(*MAINTAINER)] for _ in range(2)]
    branches += [[_commit("Cory Benfield", "cory.b@example.org")] for _ in range(2)]
    merges = [_merged("Lukasa", n, branch[-1], _commit(*MAINTAINER)) for n, branch in enumerate(branches, 1)]
    who = Identities([*(c for branch in branches for c in branch), *merges])
    # Then Cory, who wrote most of the fork's branches, is Lukasa, and the maintainer is herself
    assert who.of(branches[0][0]) == "Lukasa"
    assert {who.of(b[-1]) for b in branches[:4]} == {"Mia Park"}


def test_an_address_whose_local_part_is_a_fork_is_that_login_only_if_no_one_else_wrote_the_fork() -> None:
    # Given Alex Gaynor's pull request from his fork "alex", and David's from his fork "davidism"
    gaynor = _commit("Alex Gaynor", "alex.gaynor@example.org")
    david = _commit("David Lord", "davidism@example.org")
    merges = [
        _merged(fork, n, head, _commit(*MAINTAINER))
        for n, (fork, head) in enumerate([("alex", gaynor), ("davidism", david)], 1)
    ]
    # and commits by another Alex whose address begins "alex@"
    morega = _commit("Alex Morega", "alex@grep.example")
    who = Identities([gaynor, david, *merges, morega])
    # Then the other Alex is not "alex"; David, who wrote his fork's branch, is "davidism"
    assert who.of(morega) == "Alex Morega"
    assert who.of(david) == "davidism"


def test_a_name_whose_letters_spell_a_login_of_the_history_is_that_login() -> None:
    # Given Tom's commits under his name at one address, and under his login at another
    named = [_commit("Tom Christie", "tom@studio.example") for _ in range(3)]
    login = [_commit("tomchristie", "tom@home.example") for _ in range(2)]
    # And Kim's login from a noreply address, and her name at work
    kim = [_commit("Kim Park", "kim@work.example"), _commit("kimpark", "777+kimpark@users.noreply.github.com")]
    # And Al, whose short name spells the login of someone else: too short to tell
    short = [_commit("A L", "al@x.example"), _commit("al", "al@y.example")]
    who = Identities([*named, *login, *kim, *short])
    # Then Tom is one actor, Kim too, and Al's two stay apart
    assert {who.of(c) for c in [*named, *login]} == {"tomchristie"}
    assert {who.of(c) for c in kim} == {"kimpark"}
    assert [who.of(c) for c in short] == ["A L", "al"]
    # And the import can say who it joined, and why
    assert (["tomchristie", "Tom Christie"], "a name that spells a login") in who.joined()
    assert (["kimpark", "Kim Park"], "a noreply address") in who.joined()


def test_a_commit_without_a_name_is_its_addresss_or_unknown() -> None:
    who = Identities([])
    assert who.of(_commit("", "dana@example.org")) == "dana"
    assert who.of(_commit("", "")) == "unknown"


def test_one_pull_request_from_a_fork_its_author_spells_is_enough() -> None:
    # Given Bo's one PR from his fork, and his commits under his name
    head = _commit("Bo Chen", "bo@example.org")
    merge = _merged("bochen", 1, head, _commit(*MAINTAINER))
    direct = _commit("Bo Chen", "bo@example.org")
    who = Identities([head, merge, direct])
    # Then his name, spelling the fork's login, is that login (one vote is too few for an address)
    assert {who.of(head), who.of(direct)} == {"bochen"}
