package fleet

// Assign is assign, for the tests.
var Assign = assign
