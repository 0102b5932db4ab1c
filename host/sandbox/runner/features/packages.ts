// packages.ts: the host's packages at run time (allow_runtime_packages).
// `packages.missing {code}` answers the top-level modules the code imports
// that the interpreter cannot find; after installing them on the host,
// `packages.add {paths, libs}` puts their directories (under /lib/packages,
// read-only) on sys.path, and the directories of their shared libraries on
// the dynamic loader's search path (LD_LIBRARY_PATH). The sandbox installs nothing itself.

import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

register({
  name: "packages",
  install(rt: Runtime) {
    const mod = rt.pbx.packages;
    rt.channel.handle("packages.missing", (params: Any) => {
      const r = mod.missing(String(params?.code ?? ""));
      try {
        return { missing: r.toJs() };
      } finally {
        r.destroy();
      }
    });
    rt.channel.handle("packages.add", (params: Any) => {
      const paths = Array.isArray(params?.paths) ? params.paths.map(String) : [];
      const libs = Array.isArray(params?.libs) ? params.libs.map(String) : [];
      mod.add_paths(rt.py.toPy(paths));
      mod.add_libs(rt.py.toPy(libs));
      return {};
    });
  },
});
