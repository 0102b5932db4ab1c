package bridgev1

import "strings"

// ProtocolVersion is the go-plugin handshake protocol version that goes with
// this package (sdk.Handshake uses it). A host and a plugin of different
// versions refuse each other at start.
const ProtocolVersion = 1

const codePrefix = "ERROR_CODE_"

// Slug returns the code's name in the Go SDK: "invalid_argument" for
// ERROR_CODE_INVALID_ARGUMENT. Unknown and unspecified codes are "internal".
func (c ErrorCode) Slug() string {
	name, ok := ErrorCode_name[int32(c)]
	if !ok || c == ErrorCode_ERROR_CODE_UNSPECIFIED {
		return "internal"
	}
	return strings.ToLower(strings.TrimPrefix(name, codePrefix))
}

// CodeFromSlug is the inverse of Slug; unknown names are ERROR_CODE_INTERNAL.
func CodeFromSlug(slug string) ErrorCode {
	if v, ok := ErrorCode_value[codePrefix+strings.ToUpper(slug)]; ok && v != 0 {
		return ErrorCode(v)
	}
	return ErrorCode_ERROR_CODE_INTERNAL
}
