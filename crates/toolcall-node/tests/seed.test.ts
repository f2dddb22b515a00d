// The seed's test, as written there: a mocked transport (vi.fn()) returns a response that calls
// a tool the request never defined; the membership check and the matcher catch it, and the guard
// turns it into an error tool_result paired to tu_1 with the unknownToolCalls counter at 1.
import toolcall from '../js/index.js'

const { ToolLoop, ToolError, ParseError, InternalError, Scorer, assertToolCallsDefined, score } = toolcall

const tools = [
  {
    name: 'get_weather',
    description: 'The weather in a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
]
const request = { model: 'claude-sonnet-4-5', max_tokens: 256, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }
const toolUse = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  stop_reason: 'tool_use',
  content: [{ type: 'tool_use', id: 'tu_1', name: 'fetch_weather', input: { city: 'Paris' } }],
}
const answer = {
  id: 'msg_2',
  type: 'message',
  role: 'assistant',
  stop_reason: 'end_turn',
  content: [{ type: 'text', text: 'It is sunny in Paris.' }],
}

describe('the seed', () => {
  it('catches a call to a tool the request did not define', async () => {
    const transport = vi.fn(async (_req: unknown) => toolUse)
    const response = await transport(request)
    const defined = request.tools.map((t) => t.name)
    const call = response.content[0]
    // The seed's own check: it names the problem, nothing more.
    expect(defined).not.toContain(call.name)
    // toolcall-score says which name, why, and what it was meant to be.
    expect(response).not.toCallOnlyDefinedTools(request)
    expect(() => expect(response).toCallOnlyDefinedTools(request)).toThrow(
      'unknown_tool `fetch_weather` (invented) at response call 1 [id tu_1]: not defined, and nothing in the request mentions it; did you mean `get_weather`?',
    )
    expect(() => assertToolCallsDefined(request, response)).toThrow(/did you mean `get_weather`\?/)
    expect(transport).toHaveBeenCalledTimes(1)
  })

  it('answers the unknown call with an error result paired by id, and counts it', async () => {
    const transport = vi.fn().mockResolvedValueOnce(toolUse).mockResolvedValueOnce(answer)
    const guard = new ToolLoop(tools)
    const messages: any[] = [{ role: 'user', content: 'Weather in Paris?' }]
    const run = vi.fn(() => ({ sunny: true }))
    let step
    for (;;) {
      const response = await transport({ ...request, messages: [...messages] })
      messages.push({ role: 'assistant', content: response.content })
      step = guard.step(response)
      if (step.done) break
      messages.push(...step.answerWith(run).messages)
    }
    expect(step.outcome).toBe('finished')
    expect(step.text).toBe('It is sunny in Paris.')
    expect(run).not.toHaveBeenCalled()
    const sent = transport.mock.calls[1][0].messages
    const [result] = sent[2].content
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'tu_1', is_error: true })
    expect(result.content).toContain('Did you mean `get_weather`?')
    expect(guard.turn.unknownCalls).toBe(1)
    expect(guard.turn.unknownNames).toEqual({ fetch_weather: 1 })
  })
})

describe('the guard', () => {
  const chat = (id: string, name: string) => ({
    object: 'chat.completion',
    choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: '{"city":"Paris"}' } }] } }],
  })
  const openaiTools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]

  it('escalates at the second unknown name and closes the unrun call', () => {
    const guard = new ToolLoop(openaiTools)
    const first = guard.step(chat('c1', 'weather_lookup'))
    expect(first.done).toBe(false)
    const sent = first.answer([])
    expect(sent.results).toEqual([expect.objectContaining({ callId: 'c1', isError: true })])
    const end = guard.step(chat('c2', 'forecast'))
    expect(end).toMatchObject({ done: true, outcome: 'unknown_tool_escalation', names: ['weather_lookup', 'forecast'] })
    expect(end.closing.results[0].callId).toBe('c2')
    expect(guard.turn.unknownCalls).toBe(2)
  })

  it('runs defined calls, sends a ToolError as an error result, and refuses a wrong count', () => {
    const guard = new ToolLoop(openaiTools)
    const pending = guard.step(chat('c1', 'get_weather'))
    expect(pending.execute.map((c: any) => c.arguments)).toEqual([{ city: 'Paris' }])
    expect(() => pending.answer([])).toThrow(/0 tool output\(s\) given for 1 executed call/)
    // Refused, the calls are still waiting: the right count then answers them.
    expect(pending.answer([{ temp: 20 }]).results[0]).toMatchObject({ callId: 'c1', isError: false })
    const again = guard.step(chat('c2', 'get_weather'))
    const results = again.answerWith(() => {
      throw new ToolError('the weather service is down')
    })
    expect(results.results[0]).toEqual({ callId: 'c2', name: 'get_weather', isError: true, content: 'the weather service is down' })
    expect(() => again.answer(['x'])).toThrow(/no calls are waiting/)
    const budget = new ToolLoop(openaiTools, { maxSteps: 1 })
    expect(budget.step(chat('c3', 'get_weather'))).toMatchObject({ outcome: 'step_budget_exhausted', steps: 1 })
  })
})

describe('errors', () => {
  it('a body that cannot be read is a ParseError with its place', () => {
    let error: any
    try {
      score('{"type": "message", "content": [{"type": "tool_use", "name": 7}]}', { tools })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ParseError)
    expect(error).toMatchObject({ what: 'response', member: '/content/0/name', line: 1 })
    expect(() => score({}, {})).toThrow(TypeError)
  })

  it('a panic in the core is thrown, not an abort', () => {
    expect(() => toolcall._panicForTest()).toThrow(InternalError)
    expect(score(answer, { tools }).passed).toBe(true)
  })

  it('a prepared Scorer gives what score gives', () => {
    const scorer = new Scorer({ tools })
    for (const response of [toolUse, answer]) {
      expect(scorer.score(response).toJSON()).toEqual(score(response, { tools }).toJSON())
    }
    expect(scorer.score(toolUse).passed).toBe(false)
  })

  it('a schema violation names the argument path', () => {
    const v = score({ ...toolUse, content: [{ type: 'tool_use', id: 'tu_2', name: 'get_weather', input: { city: 7 } }] }, { tools })
    expect(v.findings[0]).toMatchObject({ kind: 'schema_violation', argumentPath: '/city' })
  })
})
