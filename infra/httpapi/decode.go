package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// DecodeJSON decodes body into v (a pointer to a struct) strictly: the body
// must be one JSON object, unknown fields are refused, and every error is a
// KindInvalid *domain.Error naming the field (dotted path, e.g.
// "resources.gpu"). Unknown fields are found by comparing the body's keys
// with v's json tags, never by parsing error messages.
func DecodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return domain.Invalid("", "body", "a JSON object is required")
	}
	if err := checkKeys(body, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return domain.Invalid("", "body", "must hold exactly one JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var de *domain.Error
	if errors.As(err, &de) {
		return err
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return domain.Invalid("", field, "must be a %s, not a JSON %s", typeName(typeErr.Type), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return domain.Invalid("", "body", "malformed JSON at byte %d", syntaxErr.Offset)
	}
	return domain.Invalid("", "body", "malformed JSON")
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))
var unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

// checkKeys refuses object keys that t (a struct, possibly behind pointers,
// slices or maps) does not declare.
func checkKeys(raw []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type decodes (and validates) itself
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			if path == "" {
				return jsonError(err)
			}
			return nil // a type error, reported by the real decode
		}
		if obj == nil {
			return nil
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				field := join(path, k)
				if k == "" {
					field = join(path, "(empty key)")
				}
				return domain.Invalid("", field, "unknown field")
			}
			if err := checkKeys(obj[k], ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, it := range items {
			if err := checkKeys(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for k, it := range obj {
			if err := checkKeys(it, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields lists the json names of t's exported fields (embedded structs
// flattened), as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
