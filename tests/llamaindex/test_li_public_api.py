"""The public surface: a sorted __all__, typed, and nothing done at import."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import commonplace_llamaindex


def test_all_is_sorted_and_complete() -> None:
    names = commonplace_llamaindex.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(commonplace_llamaindex, name), name
    public = {n for n in vars(commonplace_llamaindex) if not n.startswith("_")}
    assert public == set(names) - {"__version__"}


def test_the_package_is_typed() -> None:
    assert resources.files("commonplace_llamaindex").joinpath("py.typed").is_file()


def test_import_opens_nothing_and_sets_nothing(tmp_path: Path) -> None:
    code = (
        "import os\n"
        "before = dict(os.environ)\n"
        "import commonplace_llamaindex, llama_index.core\n"
        "assert llama_index.core.global_tokenizer is None, 'tokenizer built at import'\n"
        "assert dict(os.environ) == before, 'environment changed at import'\n"
        "assert os.listdir('.') == [], os.listdir('.')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_token_counting_works_offline_with_no_cache_of_our_own(tmp_path: Path) -> None:
    """LlamaIndex's tokenizer comes from the rank file it ships: no download, ever."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from commonplace import count_tokens\n"
        "from commonplace_llamaindex._messages import llama_index_tokenizer\n"
        "text = 'Ana moved to Porto with Joana; naïve café 東京.'\n"
        "assert len(llama_index_tokenizer(text)) == count_tokens(text) > 0\n"
        "print('ok')\n"
    )
    cache_vars = ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")
    env = {k: v for k, v in os.environ.items() if k not in cache_vars}
    env["TMPDIR"] = str(tmp_path)  # tiktoken's own cache would be here, and it is empty
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
