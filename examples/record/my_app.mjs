// A 20-line LangGraph JS app: drafts, asks a human, and files (the twin of my_app.py).
import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";

const State = Annotation.Root({
  topic: Annotation(),
  notes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const draft = (s) => ({ notes: [`draft about ${s.topic}`] });

const review = () => ({ notes: [`reviewer: ${interrupt("ok?")}`] });

export function build() {
  return new StateGraph(State)
    .addNode("draft", draft)
    .addNode("review", review)
    .addEdge(START, "draft")
    .addEdge("draft", "review")
    .addEdge("review", END);
}
