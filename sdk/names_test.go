package sdk_test

import (
	"testing"

	"github.com/parselbox/parselbox/sdk"
)

func TestPythonName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"get-user":     "get_user",
		"a.b-c.d":      "a.b_c.d",
		"2fa":          "_2fa",
		"ok_name9":     "ok_name9",
		"with space.x": "with_space.x",
		"ünïcode":      "_n_code",
		"import":       "import_",
		"files.class":  "files.class_",
		"task":         "task_",
		"sub.task":     "sub.task_",
		"tasks":        "tasks",
		"None":         "None_",
	} {
		if got := sdk.PythonName(in); got != want {
			t.Errorf("PythonName(%q) = %q, want %q", in, got, want)
		}
	}
}
