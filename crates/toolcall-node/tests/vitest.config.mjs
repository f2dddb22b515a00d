// The Node tier's Vitest settings (scripts/test-node): globals, so the tests need no `vitest`
// import resolved from this folder (Vitest is installed under .cache/npm-node), and the matcher
// registered for every file.
export default {
  test: {
    globals: true,
    include: ['**/*.test.ts'],
    setupFiles: ['./setup.mjs'],
  },
}
