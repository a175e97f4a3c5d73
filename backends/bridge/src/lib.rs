//! # checkpoint-bridge
//!
//! A `CheckpointSaver` whose calls travel to a child process that holds the real saver
//! (docs/bridge-protocol.md): the kit judges Python savers (LangGraph's own and any
//! `module:factory`) the way it judges Rust ones, and a Rust saver served through the
//! bridge gets the same verdict as when called directly.
//!
//! - [`python_registration`]: `python:sqlite`, `python` + `module:factory`, ... as a
//!   [`BridgeRegistration`], with the managed Python environment made on first use
//!   ([`managed_python`]) or a user's own ([`PythonOptions::python_env`]).
//! - [`js_registration`]: `js:memory`, `js:sqlite`, `js:postgres`, `js` + an initializer
//!   module, served by the node child in `bridges/js` ([`managed_node`] installs its
//!   pinned packages on first use).
//! - [`BridgeRegistration`]: one child per run, a fresh saver instance per case, reopen
//!   and open-by-location for the durability cases; [`BridgeRegistration::annotate`] adds
//!   the side judged (async or sync methods) and the package versions to the report.
//! - [`BridgeSaver`]: the saver over the protocol; many calls in flight; a child that dies
//!   or sends garbage gives `Storage` errors at once, never a hang.
//! - [`server`]: the protocol served by Rust, for any `Registration`.
//!
//! On Linux a child gets SIGKILL when the host dies (PR_SET_PDEATHSIG), so a kill of the
//! host in the crash test is a kill of the saver, and nothing is left running.

#![warn(missing_docs)]

mod js;
mod managed;
mod process;
pub mod protocol;
mod python;
mod registration;
mod saver;
pub mod server;

pub use js::{
    is_js_graph, js_needs_postgres, js_recorder_command, js_registration, managed_node, parse_js_saver, JsOptions,
    JS_PINNED, JS_SHORT_NAMES, NODE_ENV_VAR, NPM_ENV_VAR,
};
pub use managed::{SpecError, POSTGRES_URL_ENV};
pub use process::ChildCommand;
pub use python::{
    child_command, managed_python, needs_postgres, parse_python_saver, python_registration, recorder_command,
    user_python, PythonOptions, BASE_PYTHON_ENV_VAR, PINNED, PYTHON_ENV_VAR, RECORD_PINNED, SHORT_NAMES,
};
pub use registration::{BridgeFacts, BridgeRegistration, BridgeSpec};
pub use saver::{BridgeSaver, NEXT_VERSION_TIMEOUT};
