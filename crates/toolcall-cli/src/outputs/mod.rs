//! One data model of a run, drawn by one module per output.
//!
//! `check`, `rate` and `replay` each build their run as a serializable model (`model.rs`; `rate`'s
//! is `toolcall_rate::Report`, `score`'s the verdict); the model, wrapped in one envelope
//! (`{"toolcall": 1, "command": …, "ok": …, …}`), is what `--json` prints and `--json-out`
//! writes. Every other file output is drawn from exactly that
//! JSON value, never from the run itself, so what the page or the JUnit report shows cannot
//! differ from what `--json` says:
//!
//! - `html.rs`: one self-contained page (`--html FILE`);
//! - `junit.rs`: JUnit XML (`--junit FILE`), a known failure as `<skipped type="xfail">`.
//!
//! `check`'s JSON, JUnit report and page are written as they are drawn (`stream.rs`,
//! [`Files::write_streamed`], [`html::render_with`]): the same bytes as from the whole value,
//! never the whole run held as one.
//!
//! A new output is one module here and one entry of the `outputs!` registry below, which
//! generates the [`Output`] variant, [`Output::ALL`] and the flag's field of [`Files`] from it,
//! so an output left out of `ALL` cannot be written. The terminal text and GitHub annotations stay with their commands (`check`
//! draws both from the same model).

pub mod html;
pub mod junit;
pub mod model;
pub mod stream;

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::errors::CliError;

/// The version of the JSON shape: bumped when a key is removed or renamed (never otherwise).
pub const SHAPE_VERSION: u32 = 1;

/// The envelope every command's JSON shares: which command, whether it passed, and its model.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize> {
    /// [`SHAPE_VERSION`].
    pub toolcall: u32,
    /// `check`, `rate`, `replay` or `score`.
    pub command: &'static str,
    /// Whether the run passed (exit code 0).
    pub ok: bool,
    /// The command's own model, its keys beside the envelope's.
    #[serde(flatten)]
    pub run: &'a T,
}

/// The run as the JSON value every output is drawn from.
pub fn value<T: Serialize>(command: &'static str, ok: bool, run: &T) -> Result<Value, CliError> {
    serde_json::to_value(Envelope {
        toolcall: SHAPE_VERSION,
        command,
        ok,
        run,
    })
    .map_err(CliError::Serialize)
}

/// The outputs: one entry each generates its [`Output`] variant, its place in
/// [`Output::ALL`], its renderer and flag, and its field of [`Files`]. Everything that goes
/// over the outputs iterates `ALL` or matches on the generated arms, so an output cannot exist
/// without being listed, nor be listed without a flag and a file to go to.
macro_rules! outputs {
    ($(
        $(#[$doc:meta])*
        $variant:ident => $render:path, $flag:literal,
            $(#[$help:meta])* $field:ident;
    )*) => {
        /// A file output, drawn from the run's JSON value.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Output {
            $( $(#[$doc])* $variant, )*
        }

        impl Output {
            /// Every output, in the order they are written.
            pub const ALL: [Output; [$(stringify!($variant)),*].len()] = [$(Output::$variant),*];

            /// Draws `run`.
            pub fn render(self, run: &Value) -> String {
                match self {
                    $( Output::$variant => $render(run), )*
                }
            }

            /// The flag that asks for it.
            pub fn flag(self) -> &'static str {
                match self {
                    $( Output::$variant => concat!("--", $flag), )*
                }
            }
        }

        /// The file outputs a command was asked for.
        #[derive(Debug, Default, clap::Args)]
        pub struct Files {
            $(
                $(#[$help])*
                #[arg(long = $flag, value_name = "FILE")]
                pub $field: Option<PathBuf>,
            )*
        }

        impl Files {
            fn path(&self, output: Output) -> Option<&Path> {
                match output {
                    $( Output::$variant => self.$field.as_deref(), )*
                }
            }
        }
    };
}

// The registry: one entry per file output (its module draws it from the run's JSON value).
outputs! {
    /// The JSON itself (`--json-out`).
    Json => json, "json-out",
        /// Also write the JSON report to FILE (what --json prints).
        json_out;
    /// JUnit XML (`--junit`).
    Junit => junit::render, "junit",
        /// Write a JUnit XML report to FILE: one testcase per case (a known failure as skipped,
        /// type xfail, the way pytest reports an xfail).
        junit;
    /// One self-contained HTML page (`--html`).
    Html => html::render, "html",
        /// Write one self-contained HTML page to FILE: no network request of any kind, readable
        /// with JavaScript off.
        html;
}

/// The JSON output: the value itself, pretty-printed, with a final newline.
fn json(run: &Value) -> String {
    format!(
        "{}\n",
        toolcall_score::to_json_pretty(run).unwrap_or_default()
    )
}

impl Files {
    /// Whether any file output was asked for.
    pub fn any(&self) -> bool {
        Output::ALL.iter().any(|o| self.path(*o).is_some())
    }

    /// A file output that would overwrite one of `inputs`, if one would.
    pub fn clobbers(&self, inputs: &[&Path]) -> Option<(Output, PathBuf)> {
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        Output::ALL.iter().find_map(|&output| {
            let path = self.path(output)?;
            inputs
                .iter()
                .any(|input| same(path, input))
                .then(|| (output, path.to_path_buf()))
        })
    }

    /// Writes every output asked for, atomically, each drawn from `run`.
    pub fn write(&self, run: &Value) -> Result<(), CliError> {
        self.write_each(
            &[],
            &mut |_, _| Ok(()),
            &mut |output| Ok(output.render(run)),
        )
    }

    /// [`Files::write`] for a run too big to hold as one value: the outputs in `streamed` are
    /// written by `stream` as it draws them (see [`stream`]); the others are drawn from the
    /// whole value, built by `whole` only when one of them was asked for.
    pub fn write_streamed(
        &self,
        streamed: &[Output],
        stream: &mut dyn FnMut(Output, &mut dyn Write) -> io::Result<()>,
        whole: &mut dyn FnMut() -> Result<Value, CliError>,
    ) -> Result<(), CliError> {
        let mut run = None;
        self.write_each(streamed, stream, &mut |output| {
            let run = match &mut run {
                Some(run) => run,
                None => run.insert(whole()?),
            };
            Ok(output.render(run))
        })
    }

    fn write_each(
        &self,
        streamed: &[Output],
        stream: &mut dyn FnMut(Output, &mut dyn Write) -> io::Result<()>,
        render: &mut dyn FnMut(Output) -> Result<String, CliError>,
    ) -> Result<(), CliError> {
        for output in Output::ALL {
            let Some(path) = self.path(output) else {
                continue;
            };
            let error = |source| CliError::Output {
                flag: output.flag(),
                path: path.to_path_buf(),
                source,
            };
            if streamed.contains(&output) {
                toolcall_fs::write_atomic_with(path, |file| {
                    let mut out = BufWriter::new(file);
                    stream(output, &mut out)?;
                    out.flush()
                })
                .map_err(error)?;
            } else {
                let text = render(output)?;
                toolcall_fs::write_atomic(path, text.as_bytes()).map_err(error)?;
            }
        }
        Ok(())
    }
}
