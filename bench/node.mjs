// bench/run's Node rows: the per-call cost of the addon's Scorer.score on a tiny response (as
// JSON text and as an object, which the JavaScript half JSON.stringifies), and the addon's size.
// Prints tab-separated ROW lines. Usage: node bench/node.mjs ADDON [--quick]
import fs from 'node:fs'
import os from 'node:os'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const [addon, ...flags] = process.argv.slice(2)
process.env.TOOLCALL_SCORE_NATIVE = addon
const { Scorer } = require('../crates/toolcall-node/js/index.js')
const quick = flags.includes('--quick')

const scorer = new Scorer({ tools: [{ name: 'get_invoice', input_schema: { type: 'object' } }] })
const tiny = {
  type: 'message',
  role: 'assistant',
  stop_reason: 'tool_use',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_invoice', input: {} }],
}
const n = quick ? 20000 : 200000
const perCall = {}
for (const [label, item] of [['text', JSON.stringify(tiny)], ['object', tiny]]) {
  let best = Infinity
  for (let round = 0; round < 3; round++) {
    const start = process.cpuUsage()
    for (let i = 0; i < n; i++) scorer.score(item)
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / n)
  }
  perCall[label] = best
}
const worst = Math.max(perCall.text, perCall.object)
const load = os.loadavg()[0].toFixed(2)
const row = (...cells) => console.log(['ROW', ...cells].join('\t'))
row(
  'node: per-call cost of Scorer.score, tiny response',
  `${worst.toFixed(2)} µs`,
  '<= 5 µs',
  worst <= 5 ? '✓' : '✗',
  `JSON text ${perCall.text.toFixed(2)} µs, object ${perCall.object.toFixed(2)} µs (scoring included; best of 3 x ${n}, CPU time); load ${load}`,
)
const size = fs.statSync(addon).size
row('node: addon size (release, stripped)', `${(size / 1e6).toFixed(2)} MB`, 'say it', '✓', addon.split('/').pop())
