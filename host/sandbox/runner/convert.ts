// convert.ts: parsed JSON values into Python values, converted once (no
// JSON text in between).

// deno-lint-ignore no-explicit-any
type Any = any;

// hasBytes reports whether a parsed value holds {"__b64__": string}, the
// JSON form of bytes, which Python then decodes (rarely present, so only
// then).
function hasBytes(v: Any, depth = 0): boolean {
  if (typeof v !== "object" || v === null || depth > 500) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (hasBytes(x, depth + 1)) return true;
    return false;
  }
  if (typeof v.__b64__ === "string" && Object.keys(v).length === 1) return true;
  for (const k in v) if (hasBytes(v[k], depth + 1)) return true;
  return false;
}

/** Converts a value parsed from JSON to Python (as a PyProxy, or a
 * primitive that converts itself), JSON null as None, and reports whether
 * it holds bytes in their JSON form. */
export function toPython(py: Any, v: unknown): [Any, boolean] {
  if (v === null) return [undefined, false];
  if (typeof v !== "object") return [v, false];
  const bytes = hasBytes(v);
  // JS null converts to pyodide's jsnull unless asked otherwise; a JSON
  // null is None. Only this conversion is asked: the guest's own JS values
  // keep the default.
  py._api.setCompatNullToNone(true);
  try {
    return [py.toPy(v), bytes];
  } finally {
    py._api.setCompatNullToNone(false);
  }
}
