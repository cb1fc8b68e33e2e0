package profile

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The words of a refused profile are not written here: message_table.json is a byte-equal copy (make regen) of
// components/wirespeed/data/message_table.json, the table wirespeed.message_table fills on the Python side, so the
// agent and `wirespeed profile validate` refuse a document in the same words from one wording of them
// (tests/vectors/profiles.json holds the exact messages both must give).
//
//go:embed message_table.json
var messageTableJSON []byte

type messageTable struct {
	Templates          map[string]string    `json:"templates"`
	TypeWords          map[string]string    `json:"type_words"`
	TypeSeparator      string               `json:"type_separator"`
	ListSeparator      string               `json:"list_separator"`
	Nouns              map[string][2]string `json:"nouns"`
	SuggestWithinEdits int                  `json:"suggest_within_edits"`
}

var (
	messages     = mustMessageTable(messageTableJSON)
	messageField = regexp.MustCompile(`\{([a-z_]+)\}`)
)

// mustMessageTable panics only if the embedded table (a build input, covered by tests) is broken.
func mustMessageTable(data []byte) messageTable {
	var t messageTable
	if err := json.Unmarshal(data, &t); err != nil {
		panic(fmt.Sprintf("embedded message_table.json: %v", err))
	}
	if len(t.Templates) == 0 || len(t.TypeWords) == 0 || t.SuggestWithinEdits <= 0 {
		panic("embedded message_table.json: no templates, type words or suggestion bound")
	}
	return t
}

// say fills template's {fields} from fields (name, value pairs), every one of them, as wirespeed.message_table.say
// does. A template or field the table does not have is a programming error: it panics, and the tests find it.
func say(template string, fields ...string) string {
	text, ok := messages.Templates[template]
	if !ok {
		panic(fmt.Sprintf("message_table.json has no template %q", template))
	}
	given := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		given[fields[i]] = fields[i+1]
	}
	var wanted []string
	for _, m := range messageField.FindAllStringSubmatch(text, -1) {
		wanted = append(wanted, m[1])
	}
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	sort.Strings(wanted)
	sort.Strings(names)
	if len(fields)%2 != 0 || !slices.Equal(slices.Compact(wanted), names) {
		panic(fmt.Sprintf("message %q takes %v, given %v", template, slices.Compact(wanted), names))
	}
	return messageField.ReplaceAllStringFunc(text, func(field string) string {
		return given[strings.Trim(field, "{}")]
	})
}

// mustBeTypes is "must be a whole number", "must be a string or null": JSON types in the table's words.
func mustBeTypes(types ...string) string {
	words := make([]string, len(types))
	for i, t := range types {
		if words[i] = messages.TypeWords[t]; words[i] == "" {
			words[i] = t
		}
	}
	return say("must_be", "what", strings.Join(words, messages.TypeSeparator))
}

// plural is "1 item", "2 items": a count with its noun from the table.
func plural(n int, noun string) string {
	forms, ok := messages.Nouns[noun]
	if !ok {
		panic(fmt.Sprintf("message_table.json has no noun %q", noun))
	}
	if n == 1 {
		return fmt.Sprintf("%d %s", n, forms[0])
	}
	return fmt.Sprintf("%d %s", n, forms[1])
}
