package inproc

import "testing"

func TestToolName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"Add":               "add",
		"GetWeather":        "get_weather",
		"GetURL":            "get_url",
		"HTTPServer":        "http_server",
		"ParseHTTPResponse": "parse_http_response",
		"UserID":            "user_id",
		"ListIDs":           "list_ids",
		"IDsOf":             "ids_of",
		"GetV2Data":         "get_v2_data",
		"Base64Encode":      "base64_encode",
		"Get_URL":           "get_url",
		"X":                 "x",
		"ÄpfelZählen":       "äpfel_zählen",
		"Import":            "import_",
		"From":              "from_",
		"Task":              "task_",
		"Tasks":             "tasks",
		"True":              "true",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			if got := toolName(in); got != want {
				t.Errorf("toolName(%q) = %q, want %q", in, got, want)
			}
		})
	}
}
