// J-B17 (docs/langgraph-savers.md): SqliteSaver.deleteThread on a fresh database throws
// "no such table: checkpoints": it runs its DELETEs without `this.setup()`, which its other
// methods call first. MemorySaver and PostgresSaver (whose tables setup() made) delete
// nothing and return. Kit case: delete_thread::unknown_thread_on_a_fresh_saver_is_noop;
// the fuzz trial finds it as delete_thread::fuzz_model_sequences. Exits 1 when present.
import { each } from "./savers.mjs";

await each(["sqlite"], async (s, name) => {
  try {
    await s.deleteThread("never-stored");
  } catch (e) {
    console.log(`${name}: deleteThread("never-stored") on a fresh database -> ${e}`);
    return true;
  }
  console.log(`${name}: deleteThread("never-stored") on a fresh database -> undefined (a no-op)`);
  return false;
});
