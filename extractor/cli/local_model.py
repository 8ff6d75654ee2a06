"""`extractor local-model serve`: a local OpenAI-compatible endpoint for trying the LLM path with no account."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from extractor.cli.common import err
from extractor.local_model import DEFAULT_ALIAS, LocalModelError, LocalServer, packaged_model

local_model_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Serve a GGUF model on this machine with llama.cpp's OpenAI-compatible server (needs the 'local' extra).",
)


@local_model_app.command("serve")
def serve_command(
    model: Path | None = typer.Option(
        None, help="A GGUF model file (default: the packaged Gemma 3 270M base model, assembled on first use)."
    ),
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8080, min=1, max=65535),
    alias: str = typer.Option(DEFAULT_ALIAS, help="The model name clients pass as --model."),
    n_ctx: int = typer.Option(8192, "--n-ctx", min=512, help="Context window in tokens (prompt and answer)."),
    threads: int | None = typer.Option(
        None, min=1, help="CPU threads (default: every core; llama.cpp's own default is half of them)."
    ),
    log: Path | None = typer.Option(None, help="Append the server's own output to this file (default: discarded)."),
) -> None:
    """Start llama.cpp's server on a GGUF model and print the base URL to use; Ctrl-C stops it.

    Then, in another terminal, any command with an LLM backend works unchanged against it:

      extractor extract tests/fixtures/002_59f0e0194afd947c.txt --backend llm --config evals/local_model/settings.toml --format table

    The packaged model is Gemma 3 270M, a base model: it shows the LLM path working end to end,
    not good extractions. Point --model at a larger instruction-tuned GGUF file for real use.

    Install the 'local' extra first: pip install -e '.\\[local]' (builds llama.cpp, about 6 minutes on 2 cores).
    """
    try:
        path = model or packaged_model()
        server = LocalServer(path, host=host, port=port, alias=alias, n_ctx=n_ctx, threads=threads, log=log)
        err.print(f"starting llama.cpp's server on {escape(str(path))} ...")
        server.start()
    except LocalModelError as error:
        err.print(f"[red]error[/red]: {escape(str(error))}")
        raise typer.Exit(code=2) from error
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(f"[yellow]warning[/yellow]: listening on {escape(host)}: anyone who can reach it can use the model")
    print(f"serving model '{alias}' at {server.base_url}", flush=True)
    err.print(f"use: --backend llm --base-url {server.base_url} --model {escape(alias)}   (Ctrl-C stops the server)")
    try:
        status = server.wait()
    except KeyboardInterrupt:
        server.stop()
        err.print("stopped")
        return
    err.print(f"[red]error[/red]: the server exited with status {status}")
    raise typer.Exit(code=1)
