package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
)

// readJSON reads plain JSON (RFC 8259, not HCL's JSON syntax: strings are
// never templates). encoding/json checks the syntax; the byte offset of each
// token gives its line.
func readJSON(data []byte) (*node, errorList) {
	r := jsonReader{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	r.dec.UseNumber()
	n, err := r.value()
	if err == nil {
		if _, err = r.dec.Token(); errors.Is(err, io.EOF) {
			return n, nil
		}
		if err == nil {
			err = errors.New("unexpected data after the top-level value")
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("unexpected end of JSON input")
	}
	var errs errorList
	errs.add(r.line(), "", "%v", err)
	return nil, errs
}

type jsonReader struct {
	data []byte
	dec  *json.Decoder
}

// line is the line of the token just read (tokens never span lines).
func (r *jsonReader) line() int {
	return bytes.Count(r.data[:r.dec.InputOffset()], []byte("\n")) + 1
}

func (r *jsonReader) value() (*node, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	n := &node{line: r.line()}
	switch tok := tok.(type) {
	case json.Delim: // '[' or '{': Token reports stray closing delimiters
		if tok == '[' {
			n.v, err = r.list()
		} else {
			n.v, err = r.object()
		}
		if err != nil {
			return nil, err
		}
		_, err = r.dec.Token() // the closing delimiter
		return n, err
	case json.Number:
		f, _, err := big.ParseFloat(tok.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return nil, err
		}
		n.v = number(f)
	default: // string, bool or nil
		n.v = tok
	}
	return n, nil
}

func (r *jsonReader) list() ([]*node, error) {
	items := []*node{}
	for r.dec.More() {
		item, err := r.value()
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

func (r *jsonReader) object() ([]field, error) {
	fields := []field{}
	for r.dec.More() {
		k, err := r.dec.Token()
		if err != nil {
			return nil, err
		}
		line := r.line()
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		fields = append(fields, field{k.(string), line, v})
	}
	return fields, nil
}
