"""A 20-line LangGraph app: a counter that drafts, asks a human, and files."""
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]


def draft(s: State) -> dict:
    return {"notes": [f"draft about {s['topic']}"]}


def review(s: State) -> dict:
    return {"notes": [f"reviewer: {interrupt('ok?')}"]}


def build() -> StateGraph:
    g = StateGraph(State)
    g.add_node("draft", draft)
    g.add_node("review", review)
    g.add_edge(START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("review", END)
    return g
