// Registers toolcall-score's matcher, as a user's Vitest setup file would.
import matchers from '../js/matchers.js'

expect.extend(matchers)
