"""Stand-in for langchain_core.tools: @tool gives an object with .invoke(input: dict)."""


class _StructuredTool:
    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.description = func.__doc__ or ""

    def invoke(self, tool_input: dict):
        return self.func(**tool_input)


def tool(func):
    return _StructuredTool(func)
