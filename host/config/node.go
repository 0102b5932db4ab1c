package config

import "math/big"

// A node is one value of a configuration file together with the line it
// starts on. The three syntaxes (HCL, YAML, JSON) are read into nodes, so
// that one decoder checks them all and reports lines the same way.
//
// v holds nil, bool, string, int64, float64, []*node (a list) or []field
// (an object, in file order, duplicate keys included).
type node struct {
	line int
	v    any
}

// A field is one key of an object and its value.
type field struct {
	key  string
	line int // the line of the key
	val  *node
}

// number turns a number into int64 when it is a whole number that fits,
// and into float64 otherwise. Every syntax goes through here, so 3, 3.0 and
// 3e0 are the same value whichever file format they come from.
func number(f *big.Float) any {
	if i, acc := f.Int64(); acc == big.Exact {
		return i
	}
	v, _ := f.Float64()
	return v
}
