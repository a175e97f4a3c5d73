// An initializer in the official JS validation kit's format whose createCheckpointer needs
// what its beforeAll prepared (as one that starts a database server does), and whose first
// child kills itself at its third case: the child started to replace it must get the
// lifespan setup too (tests/bridge/js_savers.rs, a_replacement_child_is_set_up_again).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { ExactSaver } from "../exact_saver.mjs";

let prepared = false;
let created = 0;
// One marker per host process: only the run's first child kills itself.
const marker = path.join(os.tmpdir(), `checkpoint-bridge-needs-before-all-${process.ppid}`);

export default {
  checkpointerName: "NeedsBeforeAll",
  beforeAll() {
    prepared = true;
  },
  afterAll() {
    fs.rmSync(marker, { force: true });
  },
  createCheckpointer() {
    if (!prepared) throw new Error("createCheckpointer before beforeAll");
    created += 1;
    if (created === 3) {
      try {
        fs.writeFileSync(marker, "", { flag: "wx" });
        process.kill(process.pid, "SIGKILL");
      } catch {
        // the marker is there: this is the replacement child
      }
    }
    return new ExactSaver();
  },
};
