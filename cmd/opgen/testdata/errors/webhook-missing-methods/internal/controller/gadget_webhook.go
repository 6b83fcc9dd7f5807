package controller

// The user renamed GadgetWebhook.
type GadgetAdmission struct{}
