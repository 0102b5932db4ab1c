// display.ts: the view of an execution (display() in Python, module
// _parselbox.display) goes into the execution's result as "view". The
// host turns it into a full HTML document.

import { register, Runtime } from "../runtime.ts";

register({
  name: "display",
  install(rt: Runtime) {
    const take = rt.pbx.display.take;
    rt.hooks.begin.push(() => void take());
    rt.hooks.result.push((result) => {
      const html = take();
      if (typeof html === "string") result.view = html;
    });
  },
});
