// display.ts: the view of an execution (display() in Python, module
// _parselbox.display) goes into the execution's result as "view". The
// host turns it into a full HTML document.
//
// The view is kept here, set by display() through _pbx_display: an
// execution that shows nothing makes no call into Python for it.

import { register, Runtime } from "../runtime.ts";

register({
  name: "display",
  install(rt: Runtime) {
    let view: string | null = null;
    rt.py.registerJsModule("_pbx_display", {
      show(html: unknown) {
        view = String(html);
      },
    });
    // A view set between executions (by a task the guest left) is not the
    // next execution's.
    rt.hooks.begin.push(() => {
      view = null;
    });
    rt.hooks.result.push((result) => {
      if (view !== null) result.view = view;
      view = null;
    });
  },
});
