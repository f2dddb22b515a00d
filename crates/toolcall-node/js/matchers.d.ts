// The Vitest/Jest matcher of toolcall-score.

export function toCallOnlyDefinedTools(
  received: unknown,
  requestOrTools: unknown,
  options?: { format?: string },
): { pass: boolean; message: () => string }

interface ToolcallMatchers<R = unknown> {
  /** Every call of the response names a tool the request (or tools array) defined. */
  toCallOnlyDefinedTools(requestOrTools: unknown, options?: { format?: string }): R
}

declare module 'vitest' {
  interface Assertion<T = any> extends ToolcallMatchers<T> {}
  interface AsymmetricMatchersContaining extends ToolcallMatchers {}
}
