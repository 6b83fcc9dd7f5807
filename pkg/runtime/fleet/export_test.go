package fleet

// Assign is assign, for the tests.
var Assign = assign

// RunMain is runMain, for the tests.
var RunMain = runMain
