package osm

import "reflect"

// AnswerTypes are the types the client decodes the NBI's answers into, one for each kind of
// answer it reads: every JSON field they hold, nested ones too, is written by an NBI that the
// tenant chose (its OsmCluster's URL). docs/security.md gives each its bound, what it reaches
// and how it is shown, and internal/securitydoc's test fails on a field without a row there.
var AnswerTypes = []reflect.Type{
	reflect.TypeFor[tokenAnswer](),
	reflect.TypeFor[userRecord](),
	reflect.TypeFor[osmError](),
	reflect.TypeFor[Version](),
	reflect.TypeFor[Project](),
	reflect.TypeFor[VIMAccount](),
	reflect.TypeFor[NSDescriptor](),
	reflect.TypeFor[VNFDescriptor](),
	reflect.TypeFor[NSInstance](),
	reflect.TypeFor[VNFInstance](),
	reflect.TypeFor[Operation](),
	reflect.TypeFor[NSInstanceCreated](),
	reflect.TypeFor[idAnswer](),
	reflect.TypeFor[operationAnswer](),
	reflect.TypeFor[deletionAnswer](),
}
