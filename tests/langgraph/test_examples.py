"""Every LangGraph example runs, with a deterministic fake chat model, on a real file."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from langchain_core.messages import AIMessage
from lg_helpers import ScriptedModel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "langgraph"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


def tool_call(name: str, **args: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}])


def test_react_agent_gains_memory_by_swapping_the_checkpointer(
    tmp_db: Callable[[str], str], scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted(
        "Welcome! My own partner, Marta, lives in Madrid.",
        tool_call("get_weather", city="Porto"),
        "Sunny.",
    )
    rendered = load("react_checkpointer").main(model, tmp_db("react.db"))
    assert "Porto" in rendered and "Joana" in rendered
    assert "Marta" not in rendered and "Madrid" not in rendered


def test_prebuilt_nodes_bring_memory_to_the_model(
    tmp_db: Callable[[str], str], scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted("Noted.", tool_call("get_weather", city="Lisbon"), "Sunny in Lisbon.")
    messages = load("prebuilt_nodes").main(model, tmp_db("nodes.db"))
    assert [m.type for m in messages] == ["system", "human", "ai", "tool", "ai"]
    assert "Rita is a nurse in Lisbon" in messages[0].content
    # The model saw the memory on the new thread's first call.
    assert any("Rita is a nurse" in m.content for m in model.seen[1] if m.type == "system")


def test_a_prebuilt_agent_gains_memory_from_one_line(
    tmp_db: Callable[[str], str], scripted: Callable[..., ScriptedModel]
) -> None:
    model = scripted(
        "Welcome to Porto! My own partner, Marta, lives in Madrid.",
        tool_call("get_weather", city="Porto"),
        "It is sunny in Porto.",
    )
    rendered = load("prebuilt_agent").main(model, tmp_db("agent.db"))
    assert "Porto" in rendered and "Joana" in rendered
    assert "Marta" not in rendered  # the assistant's words never become memory
    # On Friday, in a new thread, the model saw Monday's memory in its system prompt,
    # on both calls of the tool loop, and never the question it was answering.
    friday = model.seen[1:]
    assert len(friday) == 2
    for seen in friday:
        assert seen[0].type == "system" and "Porto" in str(seen[0].content)
        assert "weather" not in str(seen[0].content)


def test_multi_user_graph_keeps_users_apart(
    tmp_db: Callable[[str], str], scripted: Callable[..., ScriptedModel]
) -> None:
    seen = load("multi_user").main(scripted(*["ok"] * 4), tmp_db("users.db"))
    assert "Rita" in seen["ana"] and "Tom" not in seen["ana"]
    assert "Tom" in seen["bob"] and "Rita" not in seen["bob"]


def test_the_examples_default_models_run(
    tmp_db: Callable[[str], str],
) -> None:
    for name in ("react_checkpointer", "prebuilt_nodes", "prebuilt_agent", "multi_user"):
        module = load(name)
        module.main(None, tmp_db(f"{name}.db"))
