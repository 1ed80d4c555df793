"""A small Inspect AI task for doxascope's import test: one sample, Inspect's mock model
(`mockllm/model`) scripted to call a tool twice, a tool that writes the sample's store (the
second call replaces the first value), a final answer and a scorer. Writes the log in the
format given as the first argument (`eval` or `json`) into the directory given second."""

import sys

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool
from inspect_ai.util import store


@tool
def remember():
    async def execute(key: str, value: str) -> str:
        """Remember a fact about the user.

        Args:
            key: What the fact is about.
            value: The fact.
        """
        store().set(key, value)
        return f"remembered {key}"

    return execute


@task
def memory_task():
    return Task(
        dataset=[Sample(input="My name is Chad. No wait, call me Sarah. What is my name?", target="Sarah")],
        solver=[use_tools(remember()), generate()],
        scorer=includes(),
    )


def with_usage(output: ModelOutput) -> ModelOutput:
    # Usage given up front: otherwise the mock model counts tokens with an encoding it
    # downloads, and the test must run without a network.
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def main() -> None:
    log_format, log_dir = sys.argv[1], sys.argv[2]
    model = get_model(
        "mockllm/model",
        custom_outputs=[
            with_usage(ModelOutput.for_tool_call("mockllm/model", "remember", {"key": "name", "value": "Chad"})),
            with_usage(ModelOutput.for_tool_call("mockllm/model", "remember", {"key": "name", "value": "Sarah"})),
            with_usage(ModelOutput.from_content("mockllm/model", "Your name is Sarah.")),
        ],
    )
    logs = eval(memory_task(), model=model, log_dir=log_dir, log_format=log_format, display="none")
    if logs[0].status != "success":
        raise SystemExit(f"the eval did not succeed: {logs[0].status} {logs[0].error}")


if __name__ == "__main__":
    main()
