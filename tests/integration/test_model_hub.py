"""`neural-memory models list|pull` against a real HTTP stand-in of the model hub serving tiny real
models (ONNX graphs built with `onnx`): pinned checksums, a wrong checksum refused with nothing
left behind, a cut connection resumed, a missing file; then the pulled embedder through
NM_LOCAL_MODEL (a store built by another model refuses it, naming the reindex) and the pulled
cross-encoder as `rerank: local`, end to end."""

from __future__ import annotations

import json
import math
import urllib.request
from typing import TYPE_CHECKING

import pytest
from neural_memory.errors import ConfigurationError, StoreModelMismatch
from neural_memory.local.cli import main
from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.providers import hub_models
from neural_memory.providers.hub_models import MANIFEST, models_dir
from neural_memory.providers.model_download import ChecksumMismatch, DownloadFailed, pull
from neural_memory.runtime import build_service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.hub_stand_in import Hub, running_hub
from tests.helpers.local_api import running_local_api
from tests.helpers.pipeline import note, request
from tests.helpers.tiny_models import BIAS, REVISION, hub_files, hub_rows, model_dir_files, with_file

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.providers.hub_models import HubModel
    from neural_memory.service import Service

pytestmark = pytest.mark.integration
MODEL_FILE = "onnx/model_quantized.onnx"


@pytest.fixture
def hub() -> Iterator[Hub]:
    with running_hub(hub_files(), REVISION) as served:
        yield served


@pytest.fixture
def tiny(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> dict[str, HubModel]:
    """The tiny models as rows of the catalogue, pinned to the bytes the stand-in serves."""
    rows = hub_rows(hub.files)
    for name, row in rows.items():
        monkeypatch.setitem(hub_models.HUB_MODELS, name, row)
    return rows


def _close(service: Service) -> None:
    assert isinstance(service.store, SqliteStore)
    service.store.close()


def _pull_cli(name: str, data: Path, hub: Hub) -> int:
    return main(["models", "pull", name, "--data-dir", str(data), "--hub-url", hub.url])


def test_pull_downloads_every_file_checks_its_pin_and_list_shows_it(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # When the tiny embedder is pulled from the stand-in hub
    assert _pull_cli("tiny-embedder", tmp_path, hub) == 0
    # Then its files are in the data folder, byte for byte, with a manifest of the pins
    folder = models_dir(tmp_path) / "tiny-embedder"
    assert (folder / "model_quantized.onnx").read_bytes() == hub.files["tiny-org/tiny-embedder"][MODEL_FILE]
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["revision"] == REVISION
    assert manifest["files"]["model_quantized.onnx"]["sha256"] == tiny["tiny-embedder"].model.sha256
    assert model_dir_files(models_dir(tmp_path)) == [
        "tiny-embedder/model_quantized.onnx",
        "tiny-embedder/pulled.json",
        "tiny-embedder/tokenizer.json",
    ]
    # asked at the pinned revision, redirected to the content address as the hub does
    paths = [path for path, _ in hub.requests]
    assert f"/tiny-org/tiny-embedder/resolve/{REVISION}/{MODEL_FILE}" in paths
    assert any(p.startswith("/cdn/tiny-org/tiny-embedder/") for p in paths)
    out = capsys.readouterr()
    assert "NM_LOCAL_MODEL=tiny-embedder" in out.out and "neural-memory reindex" in out.out
    # and `models list` says which models are here
    assert main(["models", "list", "--data-dir", str(tmp_path)]) == 0
    listing = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "pulled" in listing["tiny-embedder"] and "not pulled" in listing["tiny-cross-encoder"]
    assert "not pulled" in listing["bge-small-en-v1.5"] and "bundled" in listing["minilm-l6"]


def test_a_wrong_checksum_is_refused_and_nothing_of_it_is_left(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a good pull already in place
    assert _pull_cli("tiny-embedder", tmp_path, hub) == 0
    before = model_dir_files(models_dir(tmp_path))
    good = (models_dir(tmp_path) / "tiny-embedder" / "model_quantized.onnx").read_bytes()
    capsys.readouterr()
    # When the hub serves other bytes (same size) than the pinned ones
    hub.tamper[MODEL_FILE] = bytes(b ^ 0xFF for b in good)
    assert _pull_cli("tiny-embedder", tmp_path, hub) == 1
    # Then the pull is refused, naming the file and both hashes
    error = capsys.readouterr().err
    assert "sha256" in error and tiny["tiny-embedder"].model.sha256 in error and "refused" in error
    # and nothing of it is left (no part, no staging folder), the earlier pull untouched
    assert model_dir_files(models_dir(tmp_path)) == before
    assert (models_dir(tmp_path) / "tiny-embedder" / "model_quantized.onnx").read_bytes() == good
    assert not any(p.name.startswith(".") for p in models_dir(tmp_path).iterdir())


def test_a_fresh_pull_with_a_wrong_checksum_leaves_no_model_folder(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path
) -> None:
    hub.tamper["tokenizer.json"] = b'{"not": "the pinned tokenizer"}'
    with pytest.raises(ChecksumMismatch, match="tokenizer.json"):
        pull(tiny["tiny-embedder"], tmp_path, hub.url)
    assert model_dir_files(models_dir(tmp_path)) == []


def test_a_cut_connection_is_a_clear_error_and_the_next_pull_resumes_where_it_stopped(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path
) -> None:
    size = tiny["tiny-embedder"].model.size
    # Given a hub that drops the connection after 100 bytes of the model
    hub.cut[MODEL_FILE] = (100, 1)
    # When pulled without retries, Then the error says what happened and what to do
    with pytest.raises(DownloadFailed, match=r"100 of [\d,]+ bytes received.*run the same command again to resume"):
        pull(tiny["tiny-embedder"], tmp_path, hub.url, retries=0)
    part = models_dir(tmp_path) / ".pull-tiny-embedder" / "model_quantized.onnx.part"
    assert part.stat().st_size == 100  # what was received is kept
    assert not (models_dir(tmp_path) / "tiny-embedder").exists()  # and no model is half there
    # When pulled again, Then only the rest is asked for, and the model is whole and verified
    hub.requests.clear()
    folder = pull(tiny["tiny-embedder"], tmp_path, hub.url, retries=0)
    assert ("/cdn/tiny-org/tiny-embedder/" + REVISION + "/" + MODEL_FILE, "bytes=100-") in hub.requests
    assert (folder / "model_quantized.onnx").stat().st_size == size
    assert (folder / MANIFEST).is_file() and not part.parent.exists()


def test_a_connection_cut_twice_is_retried_within_one_pull(tiny: dict[str, HubModel], hub: Hub, tmp_path: Path) -> None:
    hub.cut[MODEL_FILE] = (64, 2)
    seen: list[int] = []
    folder = pull(tiny["tiny-embedder"], tmp_path, hub.url, progress=lambda f, n: seen.append(n), retries=3)
    ranges = [r for path, r in hub.requests if path.endswith(MODEL_FILE) and path.startswith("/cdn/")]
    assert ranges == [None, "bytes=64-", "bytes=128-"]
    assert (folder / "model_quantized.onnx").read_bytes() == hub.files["tiny-org/tiny-embedder"][MODEL_FILE]
    assert seen[-1] == tiny["tiny-embedder"].tokenizer.size  # progress in bytes, per file


def test_a_file_the_hub_does_not_have_is_a_clear_error(tiny: dict[str, HubModel], hub: Hub, tmp_path: Path) -> None:
    with pytest.raises(DownloadFailed, match=r"not on the hub \(404\)"):
        pull(with_file(tiny["tiny-embedder"], "onnx/model_fp16.onnx"), tmp_path, hub.url)
    assert model_dir_files(models_dir(tmp_path)) == []


def test_an_unknown_name_is_refused_with_the_choices(
    tiny: dict[str, HubModel], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "pull", "no-such-model", "--data-dir", str(tmp_path)]) == 2
    assert "bge-small-en-v1.5" in capsys.readouterr().err


def _items() -> list[ObservationIn]:
    texts = {
        "n1": "the cat sat on the mat",
        "n2": "why did the deploy fail on friday",
        "n3": "database migration rollback",
        "n4": "stock market fell",
    }
    return [note(key, key, text) for key, text in texts.items()]


def test_a_pulled_embedder_is_chosen_by_nm_local_model_and_searches(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path
) -> None:
    pull(tiny["tiny-embedder"], tmp_path, hub.url)
    service = build_service(Settings(data_dir=tmp_path, local_model="tiny-embedder"))
    try:
        assert service.embedder is not None and service.embedder.model_id == "tiny-embedder-onnx"
        service.index("acme", _items())
        reply = service.search("acme", SearchRequest(query="deploy failed friday", mode="semantic", rerank="fast"), "r")
        # the bag-of-words model puts the note sharing the query's words first
        assert reply.results[0].title == "n2"
    finally:
        _close(service)


def test_a_store_built_by_another_model_refuses_a_pulled_one_and_names_the_reindex(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a store built by the bundled model
    bundled = build_service(Settings(data_dir=tmp_path))
    bundled.index("acme", _items())
    _close(bundled)
    pull(tiny["tiny-embedder"], tmp_path, hub.url)
    # When it is searched with the pulled model, Then the search is refused, naming the command
    service = build_service(Settings(data_dir=tmp_path, local_model="tiny-embedder"))
    try:
        with pytest.raises(StoreModelMismatch, match=r"neural-memory reindex --data-dir"):
            service.search("acme", SearchRequest(query="deploy", mode="semantic", rerank="fast"), "r")
    finally:
        _close(service)
    # and so is the terminal's search, which exits 2 with the same message
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NM_LOCAL_MODEL", "tiny-embedder")
        code = main(["search", "deploy", "--workspace", "acme", "--mode", "semantic", "--data-dir", str(tmp_path)])
        assert code == 1
        error = capsys.readouterr().err
        assert "built by the embedding model all-MiniLM-L6-v2-onnx-int8" in error and "neural-memory reindex" in error
        # Then the reindex the message names rebuilds it for the pulled model, and it searches
        assert main(["reindex", "--data-dir", str(tmp_path)]) == 0
        capsys.readouterr()
        code = main(["search", "deploy failed friday", "--workspace", "acme", "--mode", "semantic", "--json",
                     "--data-dir", str(tmp_path)])  # fmt: skip
    assert code == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["title"] == "n2"


def test_a_model_not_pulled_is_a_clear_error_naming_the_pull(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = build_service(Settings(data_dir=tmp_path, local_model="bge-small-en-v1.5"))
    try:
        assert service.embedder is not None
        with pytest.raises(ConfigurationError, match=r"not pulled.*neural-memory models pull bge-small-en-v1.5"):
            service.embedder.embed(["x"], "search_query")
    finally:
        _close(service)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_rerank_local_orders_by_the_pulled_cross_encoder(tiny: dict[str, HubModel], hub: Hub, tmp_path: Path) -> None:
    pull(tiny["tiny-cross-encoder"], tmp_path, hub.url)
    # (no cosine floor: every note is a candidate for the reranker to order)
    service = build_service(Settings(data_dir=tmp_path, local_reranker="tiny-cross-encoder", min_similarity={}))
    try:
        service.index("acme", _items())
        # When searching for words one note shares with the query (and another only "the"),
        # reranked locally
        ask = request("why did the deploy fail", mode="semantic", rerank="local", llm_filter=False)
        reply = service.search("acme", ask, "r")
        # Then the cross-encoder's order and scores are the reply's: sigmoid(shared words - bias)
        assert reply.rerank.provider == "local" and reply.degraded == []
        top = reply.results[0]
        assert top.title == "n2"
        shared = len({"why", "did", "the", "deploy", "fail"})  # the query's words, all in n2
        assert top.scores.rerank == pytest.approx(_sigmoid(shared - BIAS), abs=1e-3)
        assert top.score == top.scores.rerank
        assert len(reply.results) == 4  # all reranked, none dropped without a floor
        scores = [r.scores.rerank or 0.0 for r in reply.results]
        assert scores == sorted(scores, reverse=True)
        # and a floor drops what scores under it, counted in `threshold`
        floor = 0.9  # n2 shares 5 words (0.97), n1 only "the", twice (0.62)
        floored = service.search("acme", request(ask.query, mode="semantic", rerank="local", llm_filter=False,
                                                 rerank_min_score=floor), "r")  # fmt: skip
        assert [r.title for r in floored.results] == [r.title for r in reply.results if (r.scores.rerank or 0) >= floor]
        assert floored.threshold.rerank_min_score == floor
        assert floored.threshold.rerank_dropped == len(reply.results) - len(floored.results) > 0
    finally:
        _close(service)


def test_rerank_local_without_the_model_degrades_to_fast_naming_the_pull(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service = build_service(Settings(data_dir=tmp_path))
    try:
        service.index("acme", _items())
        reply = service.search("acme", request("deploy", rerank="local", llm_filter=False), "r")
    finally:
        _close(service)
    assert reply.results and reply.rerank.provider is None
    assert len(reply.degraded) == 1
    assert reply.degraded[0].startswith("rerank:local->fast (the model ms-marco-minilm-l6-v2 is not pulled")
    assert "neural-memory models pull ms-marco-minilm-l6-v2" in reply.degraded[0]
    # an evaluation asked for it refuses to run instead (it would measure fast under another name)
    assert main(["eval", str(tmp_path), "--rerank", "local", "--data-dir", str(tmp_path)]) == 2
    assert "neural-memory models pull ms-marco-minilm-l6-v2" in capsys.readouterr().err


def test_rerank_local_over_http_through_the_local_api(
    tiny: dict[str, HubModel],
    hub: Hub,
    tmp_path: Path,
    embedder: OnnxLocalEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the cross-encoder pulled into the data folder `serve` uses, and named by the setting
    pull(tiny["tiny-cross-encoder"], tmp_path, hub.url)
    monkeypatch.setenv("NM_LOCAL_RERANKER", "tiny-cross-encoder")
    with running_local_api(tmp_path, embedder, None) as api:
        api.service.index("demo", _items())
        # When a client asks for rerank: local over HTTP
        body = {"query": "why did the deploy fail", "rerank": "local", "llmFilter": False, "explain": True}
        request = urllib.request.Request(
            api.url + "/v1/search",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {api.key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # loopback only
            reply = json.loads(response.read())
    # Then the reply says the local cross-encoder reranked, with its score and the stage explained
    assert reply["rerank"] == {"mode": "local", "provider": "local"} and reply["degraded"] == []
    top = reply["results"][0]
    assert top["id"] == "n2" and top["scores"]["rerank"] == pytest.approx(_sigmoid(5 - BIAS), abs=1e-3)
    assert {"stage": "rerank", "note": "by local"}.items() <= next(
        s for s in top["explain"] if s["stage"] == "rerank"
    ).items()


def test_a_pulled_cross_encoder_altered_on_disk_is_refused_once_per_change_of_the_file(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neural_memory.providers.embeddings.onnx_local import sha256_of
    from neural_memory.providers.rerank.cross_encoder import CrossEncoderReranker

    model = tiny["tiny-cross-encoder"]
    pull(model, tmp_path, hub.url)
    path = models_dir(tmp_path) / model.name / model.model.name
    path.write_bytes(path.read_bytes() + b"\0")  # altered after the pull
    hashed: list[str] = []
    real = sha256_of

    def counted(file: Path) -> str:
        hashed.append(str(file))
        return real(file)

    monkeypatch.setattr(f"{CrossEncoderReranker.__module__}.sha256_of", counted)
    reranker = CrossEncoderReranker(model, tmp_path)
    # When two searches ask it to score, Then each is refused naming the pull, the file hashed once
    for _ in range(2):
        with pytest.raises(ConfigurationError, match=f"models pull {model.name}"):
            reranker.scores("q", ["p"])
    assert len(hashed) == 1
    # And once the file changes (its pinned bytes back), it is read again, and scores
    path.write_bytes(path.read_bytes()[:-1])
    assert len(reranker.scores("q", ["p"])) == 1
    assert len(hashed) == 2


def test_a_data_folder_it_cannot_write_is_a_clear_error(
    tiny: dict[str, HubModel], hub: Hub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a data folder whose models/ is a file (no folder can be made there: as a full or
    # read-only disk, an OSError from the data folder's side)
    (tmp_path / "models").write_text("not a folder")
    # When pulling, Then one line says what could not be written, and no traceback
    assert _pull_cli("tiny-embedder", tmp_path, hub) == 1
    err = capsys.readouterr().err
    assert "error: could not write the model into" in err and "Traceback" not in err


def _closed_port_url() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens there once closed


@pytest.mark.parametrize(
    ("fault", "says", "part_kept"),
    [
        ("redirect loop", "redirects in a loop", False),
        ("connection refused", "ConnectError", False),
        ("reset mid-body", "ReadError", True),
        ("reset mid-body, no ranges", "ReadError", False),
        ("no answer", "gave up on", False),
        ("HTTP 503", "answered HTTP 503", False),
        ("a byte a second", "gave up on", True),
    ],
)
def test_every_network_failure_is_one_error_line_and_exit_1(
    tiny: dict[str, HubModel],
    hub: Hub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fault: str,
    says: str,
    part_kept: bool,
) -> None:
    import time

    # Given a hub that fails as named while sending the model file
    url = hub.url
    if fault == "redirect loop":
        hub.loop.add(MODEL_FILE)
    elif fault == "connection refused":
        url = _closed_port_url()
    elif fault.startswith("reset mid-body"):
        hub.reset[MODEL_FILE] = (50, 99)
        hub.ranges = "no ranges" not in fault
    elif fault == "no answer":
        hub.stall[MODEL_FILE] = 30.0
    elif fault == "HTTP 503":
        hub.status[MODEL_FILE] = 503
    else:  # never a read timeout: a byte comes well within it, but the model would take hours
        hub.trickle[MODEL_FILE] = 1.0
    # When pulled with a 3-second limit on the whole pull
    began = time.monotonic()
    code = main(["models", "pull", "tiny-embedder", "--data-dir", str(tmp_path), "--hub-url", url, "--timeout", "3"])
    took = time.monotonic() - began
    err = capsys.readouterr().err
    # Then it is one line starting with error:, naming what failed, exit 1, no traceback, within the limit
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert code == 1 and len(errors) == 1 and errors[0].startswith("error: ") and says in errors[0], err
    assert "Traceback" not in err and took < 10, (took, err)
    # And a .part is kept only when the hub can resume it (and the message says to resume)
    parts = list(models_dir(tmp_path).glob(".pull-*/*.part"))
    assert bool(parts) == part_kept, parts
    assert ("to resume" in errors[0]) == part_kept, errors[0]
    assert not (models_dir(tmp_path) / "tiny-embedder").exists()


def test_a_pull_given_up_on_resumes_where_it_stopped(tiny: dict[str, HubModel], hub: Hub, tmp_path: Path) -> None:
    # Given a pull the time limit stopped while a hub trickled the model
    hub.trickle[MODEL_FILE] = 0.5
    with pytest.raises(DownloadFailed, match="gave up on"):
        pull(tiny["tiny-embedder"], tmp_path, hub.url, deadline_s=1.5)
    part = next(models_dir(tmp_path).glob(".pull-*/*.part"))
    have = part.stat().st_size
    assert have > 0
    # When the hub is fast again and the pull is run again, Then it asks only for the rest
    del hub.trickle[MODEL_FILE]
    hub.requests.clear()
    folder = pull(tiny["tiny-embedder"], tmp_path, hub.url)
    assert any(r == f"bytes={have}-" for _, r in hub.requests), hub.requests
    assert (folder / "model_quantized.onnx").read_bytes() == hub.files["tiny-org/tiny-embedder"][MODEL_FILE]
