// Types of toolcall-score for Node (crates/toolcall-node/js/index.js).

export type Body = string | object

export interface Finding {
  kind: string
  name: string | null
  cause: 'retired' | 'subset' | 'namespace' | 'prompt_drift' | 'prose' | 'invented' | null
  suggestions: string[]
  callId: string | null
  location: string
  detail: string
  argumentPath: string | null
}

export interface Verdict {
  passed: boolean
  findings: Finding[]
  notes: Finding[]
  /** What `toolcall score` prints of it. */
  message: string
  /** `toolcall score --json`'s shape. */
  toJSON(): { verdict: 'pass' | 'fail'; findings: object[]; notes?: object[] }
}

export function score(response: Body, options: { tools?: Body; request?: Body; format?: string }): Verdict
export class Scorer {
  constructor(options: { tools?: Body; request?: Body })
  score(response: Body, options?: { format?: string }): Verdict
}
export function assertToolCallsDefined(request: Body, response: Body, options?: { format?: string }): Verdict

export class ParseError extends Error {
  what: 'response' | 'request' | 'tools'
  format: string | null
  member: string | null
  line: number | null
  column: number | null
}
export class InternalError extends Error {}
export class ToolError extends Error {}

export interface ToolCall {
  id: string | null
  name: string
  arguments: unknown
}
export interface ToolResults {
  format: string
  messages: object[]
  results: { callId: string | null; name: string | null; isError: boolean; content: string }[]
  duplicateIds: string[]
}
export interface Pending {
  done: false
  format: string
  execute: ToolCall[]
  calls: ToolCall[]
  answer(outputs: unknown[]): ToolResults
  answerWith(run: (call: ToolCall) => unknown): ToolResults
}
export interface TurnEnd {
  done: true
  outcome: 'finished' | 'unknown_tool_escalation' | 'step_budget_exhausted' | 'malformed_response'
  finished: boolean
  names: string[]
  steps: number | null
  reason: string | null
  message: string
  text: string
  closing: ToolResults | null
}
export interface Counts {
  steps: number
  calls: number
  unknownCalls: number
  invalidArguments: number
  duplicateIds: number
  unknownNames: Record<string, number>
}
export class ToolLoop {
  constructor(tools: Body, policy?: { maxSteps?: number; maxUnknownPerTurn?: number; listAvailableInErrors?: boolean })
  step(response: Body, options?: { format?: string }): Pending | TurnEnd
  resetTurn(): void
  readonly turns: number
  readonly turn: Counts
  readonly total: Counts
}
