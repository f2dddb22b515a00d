'use strict'
// toolcall-score for Node: the Rust core through its Node-API addon (crates/toolcall-node).
// The addon speaks JSON text; this file turns values into it and its answers into camelCase
// objects, and its errors into ParseError, InternalError and Error.

const path = require('path')
const { AssertionError } = require('assert')

function loadNative() {
  const file =
    process.env.TOOLCALL_SCORE_NATIVE ||
    path.join(__dirname, `toolcall-score.${process.platform}-${process.arch}.node`)
  return require(file)
}
const native = loadNative()

class ParseError extends Error {
  constructor(info) {
    super(info.message)
    this.name = 'ParseError'
    this.what = info.what
    this.format = info.format ?? null
    this.member = info.member ?? null
    this.line = info.line ?? null
    this.column = info.column ?? null
  }
}
class InternalError extends Error {
  constructor(message) {
    super(message)
    this.name = 'InternalError'
  }
}
/** Thrown by a tool run through `answerWith`: its message goes to the model as an error result. */
class ToolError extends Error {
  constructor(message) {
    super(message)
    this.name = 'ToolError'
  }
}

function translate(e) {
  let info
  try {
    info = JSON.parse(e.message).error
  } catch {
    return e
  }
  if (!info) return e
  if (info.kind === 'parse') return new ParseError(info)
  if (info.kind === 'internal') return new InternalError(info.message)
  if (info.kind === 'value') return new TypeError(info.message)
  return new Error(info.message)
}

function call(f) {
  let out
  try {
    out = f()
  } catch (e) {
    throw translate(e)
  }
  return JSON.parse(out)
}

const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v))
const opt = (v) => (v === undefined || v === null ? null : text(v))

function finding(f) {
  const paths =
    f.kind === 'schema_violation' && f.detail.startsWith('arguments fail the input schema: ')
      ? f.detail
          .slice('arguments fail the input schema: '.length)
          .split('; ')
          .filter((p) => p.startsWith('/') && p.includes(': '))
          .map((p) => p.slice(0, p.indexOf(': ')))
      : []
  return {
    kind: f.kind,
    name: f.name ?? null,
    cause: f.cause ?? null,
    suggestions: f.suggestions ?? [],
    callId: f.call_id ?? null,
    location: f.location,
    detail: f.detail,
    argumentPath: paths[0] ?? null,
  }
}

function verdict(v) {
  const json = { verdict: v.verdict, findings: v.findings }
  if (v.notes) json.notes = v.notes
  return {
    passed: v.verdict === 'pass',
    findings: v.findings.map(finding),
    notes: (v.notes ?? []).map(finding),
    message: v.message,
    toJSON: () => json,
  }
}

/** Scores `response` against `tools` (any provider's tools array) or `request` (the request sent). */
function score(response, { tools, request, format } = {}) {
  return verdict(call(() => native.scoreJson(text(response), opt(tools), opt(request), format ?? null)))
}

/** A case prepared once (its tools parsed, schemas compiled on first use) for many responses. */
class Scorer {
  constructor({ tools, request } = {}) {
    try {
      this.native = new native.NativeScorer(opt(tools), opt(request))
    } catch (e) {
      throw translate(e)
    }
  }

  score(response, { format } = {}) {
    return verdict(call(() => this.native.score(text(response), format ?? null)))
  }
}

/** Throws an AssertionError, with the CLI's message, unless every call names a defined tool. */
function assertToolCallsDefined(request, response, { format } = {}) {
  const v = score(response, { request, format })
  if (!v.passed) throw new AssertionError({ message: v.message })
  return v
}

function results(r) {
  return {
    format: r.format,
    messages: r.messages,
    results: r.results.map((x) => ({ callId: x.call_id ?? null, name: x.name ?? null, isError: x.is_error, content: x.content })),
    duplicateIds: r.duplicateIds,
  }
}

function counts(c) {
  return {
    steps: c.steps,
    calls: c.calls,
    unknownCalls: c.unknown_calls,
    invalidArguments: c.invalid_arguments,
    duplicateIds: c.duplicate_ids,
    unknownNames: Object.fromEntries(c.unknown_names),
  }
}

const output = (o) => (o instanceof Error ? { error: o.message } : { ok: o === undefined ? null : o })

/** The loop guard: hand it each model response of a turn. */
class ToolLoop {
  constructor(tools, { maxSteps = 10, maxUnknownPerTurn = 2, listAvailableInErrors = true } = {}) {
    try {
      this.native = new native.NativeToolLoop(text(tools), maxSteps, maxUnknownPerTurn, listAvailableInErrors)
    } catch (e) {
      throw translate(e)
    }
  }

  step(response, { format } = {}) {
    const s = call(() => this.native.step(text(response), format ?? null))
    if (s.done) {
      const o = s.outcome
      return {
        done: true,
        outcome: o.outcome,
        finished: o.outcome === 'finished',
        names: o.names ?? [],
        steps: o.steps ?? null,
        reason: o.reason ?? null,
        message: s.message,
        text: s.text,
        closing: s.closing ? results(s.closing) : null,
      }
    }
    const guard = this
    return {
      done: false,
      format: s.format,
      execute: s.execute,
      calls: s.calls,
      answer(outputs) {
        return results(call(() => guard.native.answer(JSON.stringify(outputs.map(output)))))
      },
      answerWith(run) {
        const outputs = s.execute.map((c) => {
          try {
            return run(c)
          } catch (e) {
            if (e instanceof ToolError) return e
            throw e
          }
        })
        return this.answer(outputs)
      },
    }
  }

  resetTurn() {
    this.native.resetTurn()
  }

  get turns() {
    return JSON.parse(this.native.metrics()).turns
  }
  get turn() {
    return counts(JSON.parse(this.native.metrics()).turn)
  }
  get total() {
    return counts(JSON.parse(this.native.metrics()).total)
  }
}

module.exports = {
  score,
  Scorer,
  assertToolCallsDefined,
  ToolLoop,
  ParseError,
  InternalError,
  ToolError,
  _panicForTest: () => call(() => native.panicForTest()),
}
