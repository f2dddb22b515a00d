// Shared helpers of the Node tier.
import fs from 'node:fs'

export function requiredEnv(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set: run this tier through scripts/test-node`)
  return value
}

/** A file as a test holds it: the parsed JSON when it is one document, else its text (a stream). */
export function body(file: string): unknown {
  const text = fs.readFileSync(file, 'utf8')
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A verdict in `toolcall score --json`'s shape, built from the camelCase fields alone. */
export function verdictDict(v: any): object {
  const finding = (f: any) => {
    const d: any = { kind: f.kind }
    if (f.name !== null) d.name = f.name
    if (f.cause !== null) d.cause = f.cause
    if (f.kind === 'unknown_tool') d.suggestions = f.suggestions
    if (f.callId !== null) d.call_id = f.callId
    d.location = f.location
    d.detail = f.detail
    return d
  }
  const d: any = { verdict: v.passed ? 'pass' : 'fail', findings: v.findings.map(finding) }
  if (v.notes.length) d.notes = v.notes.map(finding)
  return d
}
