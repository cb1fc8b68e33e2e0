package nodestatus

// maxCorrelatedKeys bounds how many distinct Events are remembered for count aggregation.
const maxCorrelatedKeys = 64

type sentEvent struct {
	name  string
	count int32
}

// correlator remembers the last maxCorrelatedKeys distinct Events posted (by type, reason and message),
// so a repeat bumps the count of the Event already posted instead of creating another.
type correlator struct {
	entries map[string]*sentEvent
	order   []string
}

func (c *correlator) remember(key, name string) {
	if len(c.order) == maxCorrelatedKeys {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[key] = &sentEvent{name: name, count: 1}
	c.order = append(c.order, key)
}

func (c *correlator) forget(key string) {
	delete(c.entries, key)
	for n, k := range c.order {
		if k == key {
			c.order = append(c.order[:n], c.order[n+1:]...)
			break
		}
	}
}
