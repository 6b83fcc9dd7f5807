package v1

// Hub makes v1 the version every other converts to and from.
func (*Oven) Hub() {}
