package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// jsonError turns an error of decoding data (a config file, or one of its
// nested objects under prefix) into one a person can act on: the key, the
// type it takes and the value found, instead of encoding/json's Go type
// dump ("cannot unmarshal string into Go struct field .browser of type
// struct { BrowserName string …"). Other errors pass through.
func jsonError(prefix string, data []byte, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		val, inArray, mapKey := valueEndingAt(data, te.Offset)
		// A field of an embedded struct (contextOptions' ContextOptions)
		// is named as the client wrote it.
		key := strings.TrimPrefix(te.Field, "ContextOptions.")
		if mapKey != "" && key != mapKey && !strings.HasSuffix(key, "."+mapKey) {
			key += "." + mapKey
		}
		if prefix != "" {
			key = prefix + "." + key
		}
		if key == "" {
			key = "the top level"
		} else {
			key = "key " + clip.Quote(key)
		}
		if inArray {
			return fmt.Errorf("%s: each item must be %s, got %s", key, typeName(te.Type), val)
		}
		return fmt.Errorf("%s must be %s, got %s", key, typeName(te.Type), val)
	case errors.As(err, &se):
		line, col := lineCol(data, se.Offset)
		return fmt.Errorf("not valid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	return err
}

// typeName names a Go type as JSON would.
func typeName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array of " + plural(t.Elem())
	case reflect.Map:
		return "an object whose values are " + plural(t.Elem())
	case reflect.Struct:
		return "an object"
	}
	return "another type"
}

func plural(t reflect.Type) string {
	switch n := typeName(t); n {
	case "a boolean (true or false)":
		return "booleans"
	case "a string":
		return "strings"
	case "a whole number":
		return "whole numbers"
	case "a number":
		return "numbers"
	case "an object":
		return "objects"
	default:
		return n
	}
}

// valueEndingAt finds the JSON value that ends at offset (where
// encoding/json reports a type mismatch) and returns it as an error quotes
// it, whether it sits in an array, and the object key it is the value of
// (encoding/json leaves a map's key out of the field it names).
func valueEndingAt(data []byte, offset int64) (val string, inArray bool, key string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type level struct {
		delim   json.Delim
		wantKey bool
		key     string
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return "a value of another type", false, ""
		}
		end := dec.InputOffset()
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.delim == '{' && top.wantKey {
			if k, ok := tok.(string); ok {
				top.key, top.wantKey = k, false
				continue
			}
		}
		inArray = top != nil && top.delim == '['
		if top != nil && top.delim == '{' {
			key = top.key
			top.wantKey = true
		} else {
			key = ""
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '[', '{':
				if end == offset {
					if d == '[' {
						return "an array", inArray, key
					}
					return "an object", inArray, key
				}
				stack = append(stack, &level{delim: d, wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1] // the parent wants a key again already
			}
			continue
		}
		if end != offset {
			continue
		}
		switch v := tok.(type) {
		case string:
			return "string " + clip.Quote(v), inArray, key
		case nil:
			return "null", inArray, key
		case bool:
			return fmt.Sprintf("boolean %v", v), inArray, key
		case json.Number:
			return "number " + clip.Short(v.String()), inArray, key
		}
		return "a value of another type", inArray, key
	}
}

// lineCol is the 1-based line and column of a byte offset.
func lineCol(data []byte, offset int64) (int, int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
