// noenv.ts: the sandbox process has no environment to show. Deno refuses
// to read one (--deny-env), and node's process.env would throw on every
// read; modules that look at it (just-bash's glob matcher, when it loads)
// see an empty one instead. Imported first, before those modules.

import process from "node:process";

Object.defineProperty(process, "env", { value: Object.freeze({}), configurable: false, writable: false });
