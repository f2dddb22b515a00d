// Parity: for every pair the Rust tests score, Node gives the verdict and findings the Rust
// library gives (its dump: ATP_PARITY_DUMP, from `cargo run -p toolcall-py --example parity_dump`).
import fs from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import toolcall from '../js/index.js'
import { body, requiredEnv, verdictDict } from './support'

it('Node and Rust give the same verdicts', () => {
  const dump = JSON.parse(fs.readFileSync(requiredEnv('ATP_PARITY_DUMP'), 'utf8'))
  expect(dump.length).toBeGreaterThanOrEqual(50)
  const differences: string[] = []
  for (const entry of dump) {
    const against = entry.tools_only ? { tools: body(entry.request) } : { request: body(entry.request) }
    let node: any
    try {
      node = verdictDict(toolcall.score(body(entry.response), against))
    } catch (e: any) {
      node = { error: e.message }
    }
    const rust = entry.verdict
    if ('error' in rust || 'error' in node) {
      if ('error' in rust !== 'error' in node) differences.push(`${entry.id}: rust ${JSON.stringify(rust)}, node ${JSON.stringify(node)}`)
      continue
    }
    if (!isDeepStrictEqual(node, rust)) differences.push(`${entry.id}:\n  rust ${JSON.stringify(rust)}\n  node ${JSON.stringify(node)}`)
  }
  expect(differences).toEqual([])
})
