// info.ts: `info` (the interpreter's figures), `warm` and `shutdown`.

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
      warm: rt.hooks.warm.every((w) => w.done()),
    }));
    // warm: the setup deferred past boot, done now; answered once it is.
    rt.channel.handle("warm", async () => {
      for (const w of rt.hooks.warm) if (!w.done()) await w.run();
      return { warm: rt.hooks.warm.every((w) => w.done()) };
    });
    rt.channel.handle("shutdown", (_params, id) => {
      rt.channel.reply(id, null);
      Deno.exit(0);
    });
  },
});
