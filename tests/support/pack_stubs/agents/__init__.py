"""Stand-in for the OpenAI Agents SDK's `agents` package: function_tool(func) wraps a function
(the SDK's FunctionTool) and leaves the function itself callable."""


class FunctionTool:
    def __init__(self, func):
        self.name = func.__name__
        self.description = func.__doc__ or ""
        self.func = func


def function_tool(func):
    return FunctionTool(func)
