'use strict'
// Vitest and Jest matchers: `expect.extend(require('toolcall-score/matchers'))`, then
// `expect(response).toCallOnlyDefinedTools(request)` (or a tools array). A failure's message is
// the CLI's: each undefined name, its cause and the did-you-mean.

const { score } = require('./index.js')

function toCallOnlyDefinedTools(received, requestOrTools, options = {}) {
  const against = Array.isArray(requestOrTools) ? { tools: requestOrTools } : { request: requestOrTools }
  const verdict = score(received, { ...against, format: options.format })
  return {
    pass: verdict.passed,
    message: () =>
      verdict.passed
        ? 'expected a call to a tool the request did not define, but every call names a defined tool'
        : verdict.message,
  }
}

module.exports = { toCallOnlyDefinedTools }
