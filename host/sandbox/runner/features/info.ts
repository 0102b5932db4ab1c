// info.ts: `info` (the interpreter's figures) and `shutdown`.

import { readableRuntime } from "../lockdown.ts";
import { register, Runtime } from "../runtime.ts";

register({
  name: "info",
  install(rt: Runtime) {
    const version = rt.pbx.python_version();
    rt.channel.handle("info", () => ({
      pyodide: rt.py.version,
      python: version,
      wasm_memory_bytes: rt.py._module.HEAP8.length,
      uptime_ms: Math.round(performance.now()),
      quota_used_bytes: rt.fs.quota.used,
      runtime_readable: readableRuntime(rt.paths).length > 0,
    }));
    rt.channel.handle("shutdown", (_params, id) => {
      rt.channel.reply(id, null);
      Deno.exit(0);
    });
  },
});
