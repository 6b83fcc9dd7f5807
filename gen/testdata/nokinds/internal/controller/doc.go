// Package controller is the controller package of a project fresh from
// opgen init: it has no kinds yet, and its main already calls Setup.
package controller
