"""Stand-in for crewai.tools: BaseTool is a pydantic model whose run() calls _run()."""

from pydantic import BaseModel


class BaseTool(BaseModel):
    name: str
    description: str

    def run(self, *args, **kwargs):
        return self._run(*args, **kwargs)
