package v1alpha1

//+genclient
