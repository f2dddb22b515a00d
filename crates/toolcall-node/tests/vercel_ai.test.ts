// Every pair of ../shared/external/vercel-ai scored from Node with the CLI's verdict. Only where
// the data is: .ci/run runs `scripts/test-node vercel_ai` with ATP_VERCEL_AI_DIR set; selected
// without it, it fails.
import fs from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import toolcall from '../js/index.js'
import { body, requiredEnv, verdictDict } from './support'

it('every pair scores as the CLI scores it', () => {
  const data = requiredEnv('ATP_VERCEL_AI_DIR')
  const manifest = path.join(data, 'manifest.json')
  expect(fs.existsSync(manifest), `ATP_VERCEL_AI_DIR is set to ${data}, which holds no manifest.json`).toBe(true)
  const cli = requiredEnv('ATP_TOOLCALL_BIN')
  const pairs = JSON.parse(fs.readFileSync(manifest, 'utf8'))
  expect(pairs.length).toBeGreaterThanOrEqual(200)
  const differences: string[] = []
  for (const pair of pairs) {
    const dir = path.join(data, pair.dir)
    const tools = path.join(dir, 'tools.json')
    const response = path.join(dir, pair.response_file)
    let node: any
    try {
      node = verdictDict(toolcall.score(body(response), { tools: body(tools) }))
    } catch (e: any) {
      node = { error: e.message }
    }
    let rust: any
    try {
      const out = JSON.parse(execFileSync(cli, ['score', '--tools', tools, '--response', response, '--json'], { encoding: 'utf8' }))
      rust = Object.fromEntries(['verdict', 'findings', 'notes'].filter((k) => k in out).map((k) => [k, out[k]]))
    } catch (e: any) {
      rust = e.status === 1 ? JSON.parse(e.stdout) : { error: String(e.stderr) }
      if (!('error' in rust)) rust = Object.fromEntries(['verdict', 'findings', 'notes'].filter((k) => k in rust).map((k) => [k, rust[k]]))
    }
    if ('error' in rust !== 'error' in node || (!('error' in rust) && !isDeepStrictEqual(rust, node))) {
      differences.push(`${pair.dir}:\n  cli  ${JSON.stringify(rust)}\n  node ${JSON.stringify(node)}`)
    }
  }
  expect(differences).toEqual([])
})
