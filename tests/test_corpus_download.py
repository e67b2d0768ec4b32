"""The corpus download through ``datasets`` against a misbehaving Hugging Face Hub.

A fake Hub on loopback (``HF_ENDPOINT``) answers the requests ``datasets.load_dataset`` makes for
the course's dataset: the dataset's info, its file list, and the file. The file is served
whole, cut short (a short body with a matching length: the server sent the wrong file), as a
404, or with its connection cut after 100 kB. Each download runs in a child process with its own
empty Hugging Face cache and data folder, and every connection except loopback refused
(``transformer_course.exercises.grading.offline``). Expected: the whole file arrives; or a clear error that says
what happened and what to do, and nothing in the data folder, not even a temporary file. A short
file must not stick in ``datasets``' cache either: the next run against a good server works.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from transformer_course.data.source import CORPUS_DATASET, CORPUS_FILENAME, CORPUS_SHA256
from transformer_course.exercises.grading import offline

REPO = Path(__file__).resolve().parents[1]
COMMIT = "a" * 40


@pytest.fixture(scope="module")
def corpus_bytes() -> bytes:
    path = os.environ.get("TRANSFORMER_COURSE_CORPUS")
    if not path or not Path(path).is_file():
        pytest.skip("needs the corpus file: set $TRANSFORMER_COURSE_CORPUS (.ci/run does)")
    return Path(path).read_bytes()


class FakeHub:
    """A loopback HTTP server speaking enough of the Hub's protocol for ``load_dataset``;
    ``mode`` says how it serves the corpus file: good, short, 404 or cut."""

    def __init__(self, body: bytes) -> None:
        self.body, self.mode, self.file_requests = body, "good", 0
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def send(self, code: int, body: bytes = b"", headers: dict | None = None) -> None:
                self.send_response(code)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                api = f"/api/datasets/{CORPUS_DATASET}"
                if path == api or path.startswith(f"{api}/revision/"):
                    info = {"id": CORPUS_DATASET, "sha": COMMIT, "private": False,
                            "siblings": [{"rfilename": CORPUS_FILENAME}], "cardData": {}}  # fmt: skip
                    return self.send(200, json.dumps(info).encode())
                if path.startswith(f"{api}/tree/"):
                    tree = [{"type": "file", "path": CORPUS_FILENAME, "size": len(hub.body),
                             "oid": "b" * 40}]  # fmt: skip
                    return self.send(200, json.dumps(tree).encode())
                if "/resolve/" in path and path.endswith(f"/{CORPUS_FILENAME}"):
                    return self.serve_corpus()
                # Everything else (README.md, a loading script, .huggingface.yaml…) is absent.
                self.send(404, b'{"error":"Entry not found"}', {"X-Error-Code": "EntryNotFound"})

            do_HEAD = do_GET

            def serve_corpus(self) -> None:
                headers = {"ETag": '"corpus"', "X-Repo-Commit": COMMIT}
                if self.command == "GET":
                    hub.file_requests += 1
                if hub.mode == "404":
                    return self.send(
                        404, b'{"error":"Entry not found"}', {"X-Error-Code": "EntryNotFound"}
                    )
                if hub.mode == "short":
                    return self.send(200, hub.body[: len(hub.body) // 2], headers)
                if hub.mode == "cut" and self.command == "GET":
                    self.send_response(200)
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(hub.body)))
                    self.end_headers()
                    self.wfile.write(hub.body[:100_000])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return None
                return self.send(200, hub.body, headers)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(corpus_bytes):
    server = FakeHub(corpus_bytes)
    yield server
    server.close()


DOWNLOAD = """
import sys
from transformer_course.data import source
try:
    print("saved", source.download_corpus(progress=False))
except (ConnectionError, ValueError) as error:
    print(type(error).__name__, error)
"""


def _download(
    hub: FakeHub, tmp_path: Path, guard: Path, endpoint: str | None = None, script: str = DOWNLOAD
) -> tuple[str, Path]:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k != "TRANSFORMER_COURSE_CORPUS"}
    env.update(
        HF_ENDPOINT=endpoint or hub.url,
        HF_HOME=str(tmp_path / "hf"),  # an empty Hugging Face cache, kept across calls of one test
        HF_HUB_DISABLE_TELEMETRY="1",
        TRANSFORMER_COURSE_DATA=str(data),
        PYTHONPATH=os.pathsep.join([str(guard), str(REPO / "lib")]),
        **{offline.BLOCKED_LOG_ENV_VAR: str(tmp_path / "blocked.log")},
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (tmp_path / "blocked.log").exists(), "only the fake Hub may be asked"
    return result.stdout.strip().splitlines()[-1], data


@pytest.fixture(scope="module")
def guard(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("guard")
    offline.write_sitecustomize(folder)
    return folder


def _left_in(data: Path) -> list[str]:
    return sorted(p.name for p in data.iterdir()) if data.exists() else []


def test_a_good_hub_gives_the_corpus(hub, tmp_path, guard, corpus_bytes):
    line, data = _download(hub, tmp_path, guard)
    assert line == f"saved {data / CORPUS_FILENAME}"
    assert (data / CORPUS_FILENAME).read_bytes() == corpus_bytes
    assert _left_in(data) == [CORPUS_FILENAME]


@pytest.mark.parametrize("datasets_first", [False, True], ids=["before-datasets", "after-datasets"])
def test_an_endpoint_with_a_trailing_slash_still_gives_the_corpus(
    hub, tmp_path, guard, corpus_bytes, datasets_first
):
    # datasets would join "http://…/" and "/datasets/…" into a "//" path the Hub answers with 404;
    # the course strips the slash, also when datasets has already read the variable.
    script = ("import datasets\n" if datasets_first else "") + DOWNLOAD
    line, data = _download(hub, tmp_path, guard, endpoint=hub.url + "/", script=script)
    assert line == f"saved {data / CORPUS_FILENAME}"
    assert (data / CORPUS_FILENAME).read_bytes() == corpus_bytes


def test_a_short_file_is_refused_and_does_not_stick_in_the_cache(hub, tmp_path, guard):
    hub.mode = "short"
    line, data = _download(hub, tmp_path, guard)
    assert line.startswith(f"ValueError the downloaded {CORPUS_FILENAME} has SHA-256 "), line
    assert f"expected {CORPUS_SHA256}" in line and "nothing was written" in line
    assert "fetch the file by hand" in line
    assert hub.file_requests == 2, "the second try goes past datasets' cache"
    assert _left_in(data) == []
    hub.mode = "good"  # the server is fixed: running again works, the short file is not reused
    line, data = _download(hub, tmp_path, guard)
    assert line == f"saved {data / CORPUS_FILENAME}"


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("404", "404 Client Error"),
        ("cut", "peer closed connection without sending complete message body"),
    ],
)
def test_a_failing_hub_says_what_happened_and_what_to_do(hub, tmp_path, guard, mode, reason):
    hub.mode = mode
    line, data = _download(hub, tmp_path, guard)
    assert line.startswith("ConnectionError Could not download the course corpus"), line
    assert reason in line
    assert f"put the file {CORPUS_FILENAME}" in line and str(data / CORPUS_FILENAME) in line
    assert "TRANSFORMER_COURSE_CORPUS" in line
    assert _left_in(data) == []
