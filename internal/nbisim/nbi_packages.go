package nbisim

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/nbisim/python"
	"github.com/osmops/osmops/internal/osmpkg"
)

// packageKind tells VNF packages (VNFDs) from NS packages (NSDs): their
// routes, wording and record shape differ a little.
type packageKind struct {
	kind osmpkg.Kind
	// topic is the NBI's collection, used in its messages ("vnfd with id ...").
	topic string
	// selfPath and contentItem make the _links of a record.
	selfPath    string
	contentItem string
	// contentPath is where a created package is (the Location header).
	contentPath string
	// statePrefix prefixes the SOL005 state fields of a listed record
	// (nsdOnboardingState for an NSD, onboardingState for a VNFD).
	statePrefix string
	store       func(*database) *packageStore
}

var (
	vnfPackages = &packageKind{
		kind: osmpkg.KindVNF, topic: "vnfds",
		selfPath: "/vnfpkgm/v1/vnf_packages/", contentItem: "package_content",
		contentPath: "/osm/vnfpkgm/v1/vnf_packages_content/",
		store:       func(db *database) *packageStore { return db.vnfPackages },
	}
	nsPackages = &packageKind{
		kind: osmpkg.KindNS, topic: "nsds",
		selfPath: "/nsd/v1/ns_descriptors/", contentItem: "nsd_content",
		contentPath: "/osm/nsd/v1/ns_descriptors_content/",
		statePrefix: "nsd",
		store:       func(db *database) *packageStore { return db.nsPackages },
	}
)

// singular is the topic's item name, "vnfd" or "nsd".
func (k *packageKind) singular() string { return strings.TrimSuffix(k.topic, "s") }

type packageStore struct {
	records        *table[*packageRecord]
	byDescriptorID map[string]*packageRecord
}

func newPackageStore() *packageStore {
	return &packageStore{records: newTable[*packageRecord](), byDescriptorID: map[string]*packageRecord{}}
}

// packageRecord is a VNFD or NSD with its package.
type packageRecord struct {
	kind *packageKind
	id   string
	// descriptor holds the descriptor's fields, out of their envelope.
	descriptor   *python.Dict
	descriptorID string
	revision     int
	// softwareVersions are the software-version (its Python repr, "'1.0'"
	// when absent) of each revision, as the NBI keeps every revision in
	// vnfds_revisions and CHANGE_VNFPKG compares the VNF's with the latest.
	softwareVersions map[int]string
	created          time.Time
	modified         time.Time
	tarball          []byte
	filename         string
	pkgDir           string
	descriptorPath   string
	// topEntries counts the files and folders directly in the package folder.
	topEntries int
	// users counts what uses the descriptor: NS instances for an NSD, VNF
	// instances for a VNFD. It makes usageState.
	users int
	// userData is _admin.userDefinedData: {} for a package uploaded in one
	// step, then what edits merged into it; uploads keep it.
	userData *python.Dict
	doc      doc
	// nested is the record without its SOL005 fields, as an NS record
	// embeds its NSD, indented for that place (see spliceNSD).
	nested []byte
}

type packageAdminDoc struct {
	UserDefinedData  *python.Dict   `json:"userDefinedData"`
	Revision         int            `json:"revision"`
	Created          epochTime      `json:"created"`
	Modified         epochTime      `json:"modified"`
	ProjectsRead     []string       `json:"projects_read"`
	ProjectsWrite    []string       `json:"projects_write"`
	OnboardingState  string         `json:"onboardingState"`
	OperationalState string         `json:"operationalState"`
	UsageState       string         `json:"usageState"`
	Storage          packageStorage `json:"storage"`
	Type             string         `json:"type,omitempty"`
}

type packageStorage struct {
	FS         string `json:"fs"`
	Path       string `json:"path"`
	Folder     string `json:"folder"`
	PkgDir     string `json:"pkg-dir"`
	Descriptor string `json:"descriptor"`
	Zipfile    string `json:"zipfile"`
}

type link struct {
	Href string `json:"href"`
}

func (p *packageRecord) usageState() string {
	if p.users > 0 {
		return "IN_USE"
	}
	return "NOT_IN_USE"
}

// render refreshes the record's docs after a change.
func (s *Server) renderPackage(p *packageRecord) {
	base := p.descriptor.Clone()
	base.Set("_id", p.id)
	base.Set("_admin", packageAdminDoc{
		UserDefinedData: p.userData, Revision: p.revision, Created: epoch(p.created), Modified: epoch(p.modified),
		ProjectsRead: []string{s.projectID}, ProjectsWrite: []string{s.projectID},
		OnboardingState: "ONBOARDED", OperationalState: "ENABLED", UsageState: p.usageState(),
		Storage: packageStorage{
			FS: "local", Path: "/app/storage/", Folder: fmt.Sprintf("%s:%d", p.id, p.revision),
			PkgDir: p.pkgDir, Descriptor: p.pkgDir + "/" + p.descriptorPath, Zipfile: p.filename,
		},
		Type: vnfdType(p),
	})
	p.nested = renderNested(base)

	// The SOL005 projection the NBI adds to listed and shown records.
	listed := base
	prefix := p.kind.statePrefix
	listed.Set(prefix+stateName(prefix, "onboardingState"), "ONBOARDED")
	listed.Set(prefix+stateName(prefix, "operationalState"), "ENABLED")
	listed.Set(prefix+stateName(prefix, "usageState"), p.usageState())
	links := python.NewDict("self", link{p.kind.selfPath + p.id})
	if p.kind.kind == osmpkg.KindVNF {
		links.Set("vnfd", link{p.kind.selfPath + p.id + "/vnfd"})
		links.Set("packageContent", link{p.kind.selfPath + p.id + "/" + p.kind.contentItem})
	} else {
		links.Set(p.kind.contentItem, link{p.kind.selfPath + p.id + "/" + p.kind.contentItem})
	}
	listed.Set("_links", links)
	p.doc = renderDoc(listed)
}

// stateName capitalises a state field after a prefix: nsd + OnboardingState.
func stateName(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return strings.ToUpper(field[:1]) + field[1:]
}

// vnfdType is the VNFD's _admin.type as the NBI sets it from its VDUs: a
// KNF, with KDUs only, gets none.
func vnfdType(p *packageRecord) string {
	if p.kind.kind != osmpkg.KindVNF {
		return ""
	}
	var pdus, vdus bool
	for _, item := range p.descriptor.List("vdu") {
		if vdu, ok := item.(*python.Dict); ok && vdu.Str("pdu-type") != "" {
			pdus = true
		} else {
			vdus = true
		}
	}
	switch {
	case pdus && vdus:
		return "hnfd"
	case pdus:
		return "pnfd"
	case vdus:
		return "vnfd"
	}
	return ""
}

func (s *Server) listPackages(c *call, kind *packageKind) (response, *nbiError) {
	store := kind.store(s.db)
	byID := func(id string) []*packageRecord {
		if p := store.byDescriptorID[id]; p != nil {
			return []*packageRecord{p}
		}
		return nil
	}
	return listRecords(c, store.records.all, index[*packageRecord]{"id", byID}), nil
}

func (s *Server) findPackage(kind *packageKind, id string) (*packageRecord, *nbiError) {
	p, found := kind.store(s.db).records.get(id)
	if !found {
		return nil, s.notFound(id)
	}
	return p, nil
}

func (s *Server) getPackage(c *call, kind *packageKind) (response, *nbiError) {
	p, err := s.findPackage(kind, c.param(0))
	if err != nil {
		return response{}, err
	}
	return docResponse(p.doc), nil
}

// upload is a checked package tarball, ready to store.
type upload struct {
	contents       *osmpkg.Contents
	descriptor     *python.Dict
	tarball        []byte
	filename       string
	topEntries     int
	descriptorPath string
}

// uploadPackage serves POST .../vnf_packages_content and .../ns_descriptors_content.
func (s *Server) uploadPackage(c *call, kind *packageKind) (response, *nbiError) {
	// DescriptorTopic.new checks the quota before it reads anything of the package.
	if err := s.checkQuota(c, kind.topic, len(kind.store(s.db).records.byID)); err != nil {
		return response{}, err
	}
	checked, err := s.checkUpload(c, kind, nil)
	if err != nil {
		return response{}, err
	}
	p := &packageRecord{kind: kind, id: uuid.NewString(), created: c.now, userData: &python.Dict{}}
	s.storeUpload(p, checked, c.now)
	return jsonResponse(http.StatusCreated, map[string]string{"id": p.id}).withHeader("Location", kind.contentPath+p.id), nil
}

// updatePackage serves the full update PUT .../package_content and .../nsd_content.
func (s *Server) updatePackage(c *call, kind *packageKind) (response, *nbiError) {
	p, err := s.findPackage(kind, c.param(0))
	if err != nil {
		return response{}, err
	}
	checked, err := s.checkUpload(c, kind, p)
	if err != nil {
		return response{}, err
	}
	s.storeUpload(p, checked, c.now)
	return noContent(), nil
}

// editPackage serves PATCH .../vnf_packages/{id} and .../ns_descriptors/{id}
// for the one field the operator edits, userDefinedData, as the NBI's
// DescriptorTopic.edit does: the object is merged into _admin.userDefinedData
// (RFC 7396: null removes a key), _admin.modified moves, the revision and the
// package stay; 204. Edits of the descriptor itself are not simulated.
func (s *Server) editPackage(c *call, kind *packageKind) (response, *nbiError) {
	p, err := s.findPackage(kind, c.param(0))
	if err != nil {
		return response{}, err
	}
	if len(bytes.TrimSpace(c.body)) == 0 {
		return response{}, errorf(http.StatusBadRequest, "Nothing to update. Provide payload and/or query string")
	}
	edit, err := c.jsonObject()
	if err != nil {
		return response{}, err
	}
	for _, key := range edit.Keys() {
		if key != "userDefinedData" && key != "_id" {
			return response{}, errorf(http.StatusUnprocessableEntity, "the simulator edits only userDefinedData, not %q", key)
		}
	}
	if value, given := edit.Get("userDefinedData"); given {
		data, isObject := value.(*python.Dict)
		if !isObject {
			return response{}, errorf(http.StatusBadRequest, "userDefinedData should be an object, but is '<class '%s'>' instead", python.TypeName(value))
		}
		p.userData = mergePatch(p.userData, data)
	}
	p.modified = c.now
	s.renderPackage(p)
	return noContent(), nil
}

// mergePatch is osm_common's deep_update_rfc7396: the members of patch
// replace those of target, objects are merged member by member, and a null
// removes the member.
func mergePatch(target, patch *python.Dict) *python.Dict {
	merged := target.Clone()
	for _, m := range patch.Members {
		child, isObject := m.Value.(*python.Dict)
		switch {
		case m.Value == nil:
			merged.Del(m.Key)
		case isObject:
			current, _ := merged.Get(m.Key)
			currentObject, _ := current.(*python.Dict)
			if currentObject == nil {
				currentObject = &python.Dict{}
			}
			merged.Set(m.Key, mergePatch(currentObject, child))
		default:
			merged.Set(m.Key, python.CloneValue(m.Value))
		}
	}
	return merged
}

// checkUpload runs the NBI's checks on an uploaded package, in its order:
// the MD5, the tarball, for an update of an in-use descriptor the changes,
// the descriptor, the id's uniqueness, the references. current is the
// record a full update replaces, else nil.
func (s *Server) checkUpload(c *call, kind *packageKind, current *packageRecord) (*upload, *nbiError) {
	if expected := c.request.Header.Get("Content-File-MD5"); expected != "" {
		sum := md5.Sum(c.body)
		if expected != hex.EncodeToString(sum[:]) {
			return nil, errorf(http.StatusConflict, "Error, MD5 mismatch")
		}
	}
	contents, err := osmpkg.Inspect(c.body)
	if err != nil {
		// The NBI names no file or line: its detail is the message alone.
		if problem, ok := errors.AsType[*osmpkg.Error](err); ok {
			detail := problem.Message
			// A bad chart reads "helm-chart '...' is not valid" in the NBI,
			// without the field path osmpkg puts in front.
			if i := strings.Index(detail, "helm-chart '"); i > 0 {
				detail = detail[i:]
			}
			return nil, errorf(http.StatusUnprocessableEntity, "%s", detail)
		}
		return nil, errorf(http.StatusUnprocessableEntity, "%s", err.Error())
	}
	if current != nil {
		// upload_content compares an in-use descriptor with its update
		// before check_conflict_on_edit validates the new one.
		if err := s.checkInUseChanges(current, c.body, contents); err != nil {
			return nil, err
		}
	}
	if contents.Descriptor.Kind != kind.kind {
		// The NBI's pyangbind validation refuses a descriptor of the other
		// kind; its text names the model's internals, so it is paraphrased.
		return nil, errorf(http.StatusUnprocessableEntity,
			"Error in pyangbind validation: a %s package is expected but %s/%s is a %s descriptor",
			kind.kind, contents.Name, contents.DescriptorPath, contents.Descriptor.Kind)
	}
	descriptor, err := readDescriptor(c.body, contents)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid yaml format %v", err)
	}
	id := contents.Descriptor.ID
	if other := kind.store(s.db).byDescriptorID[id]; other != nil && other != current {
		return nil, errorf(http.StatusConflict, "%s with id '%s' already exists for this project", kind.singular(), id)
	}
	if kind.kind == osmpkg.KindNS {
		if err := s.checkNSDReferences(descriptor); err != nil {
			return nil, err
		}
	}
	filename := c.request.Header.Get("Content-Filename")
	if filename == "" {
		filename = "package.tar.gz"
	}
	return &upload{
		contents: contents, descriptor: descriptor, tarball: c.body, filename: filename,
		topEntries: topLevelEntries(contents.Files), descriptorPath: contents.DescriptorPath,
	}, nil
}

// checkNSDReferences checks, like the NBI's _check_descriptor_dependencies,
// that every vnfd-id names an onboarded VNFD and that the vnf-profiles
// connect to external connection points those VNFDs have.
func (s *Server) checkNSDReferences(nsd *python.Dict) *nbiError {
	vnfds := map[string]*packageRecord{}
	for _, item := range nsd.List("vnfd-id") {
		id, _ := item.(string)
		vnfd := s.db.vnfPackages.byDescriptorID[id]
		if vnfd == nil {
			return errorf(http.StatusConflict, "Descriptor error at 'vnfd-id'='%s' references a non existing vnfd", id)
		}
		vnfds[id] = vnfd
	}
	for _, dfItem := range nsd.List("df") {
		df, _ := dfItem.(*python.Dict)
		for _, profileItem := range df.List("vnf-profile") {
			profile, _ := profileItem.(*python.Dict)
			vnfd := vnfds[profile.Str("vnfd-id")]
			if vnfd == nil {
				continue
			}
			for _, connectivityItem := range profile.List("virtual-link-connectivity") {
				connectivity, _ := connectivityItem.(*python.Dict)
				for _, cpdItem := range connectivity.List("constituent-cpd-id") {
					cpd, _ := cpdItem.(*python.Dict)
					if !hasExternalCPD(vnfd.descriptor, cpd.Str("constituent-cpd-id")) {
						return errorf(http.StatusUnprocessableEntity,
							"Error at df[id='%s']:vnf-profile[id='%s']:virtual-link-connectivity"+
								"[virtual-link-profile-id='%s']:constituent-cpd-id='%s' references a non "+
								"existing ext-cpd:id inside vnfd '%s'",
							df.Str("id"), profile.Str("id"), connectivity.Str("virtual-link-profile-id"),
							cpd.Str("constituent-cpd-id"), vnfd.descriptorID)
					}
				}
			}
		}
	}
	return nil
}

func hasExternalCPD(vnfd *python.Dict, id string) bool {
	for _, item := range vnfd.List("ext-cpd") {
		if cpd, ok := item.(*python.Dict); ok && cpd.Str("id") == id {
			return true
		}
	}
	return false
}

// storeUpload puts a checked upload into a new or updated record: a new
// revision, as the NBI counts them from 1.
func (s *Server) storeUpload(p *packageRecord, u *upload, now time.Time) {
	store := p.kind.store(s.db)
	if p.revision == 0 {
		store.records.add(p.id, p)
	} else {
		delete(store.byDescriptorID, p.descriptorID)
	}
	p.descriptor = u.descriptor
	p.descriptorID = u.contents.Descriptor.ID
	p.revision++
	if p.softwareVersions == nil {
		p.softwareVersions = map[int]string{}
	}
	version, given := u.descriptor.Get("software-version")
	if !given {
		version = "1.0"
	}
	p.softwareVersions[p.revision] = python.Repr(version)
	p.modified = now
	p.tarball = u.tarball
	p.filename = u.filename
	p.pkgDir = u.contents.Name
	p.descriptorPath = u.descriptorPath
	p.topEntries = u.topEntries
	store.byDescriptorID[p.descriptorID] = p
	s.renderPackage(p)
}

// deletePackage serves the DELETE routes of packages: 204, or 409 while the
// descriptor is in use (unless ?FORCE=True, as in the NBI).
func (s *Server) deletePackage(c *call, kind *packageKind) (response, *nbiError) {
	p, err := s.findPackage(kind, c.param(0))
	if err != nil {
		return response{}, err
	}
	if !forced(c.request) {
		if err := s.checkPackageUnused(p); err != nil {
			return response{}, err
		}
	}
	store := kind.store(s.db)
	store.records.remove(p.id)
	delete(store.byDescriptorID, p.descriptorID)
	return noContent(), nil
}

func (s *Server) checkPackageUnused(p *packageRecord) *nbiError {
	if p.kind.kind == osmpkg.KindNS {
		if p.users > 0 {
			return errorf(http.StatusConflict, "There is at least one NS instance using this descriptor")
		}
		return nil
	}
	if p.users > 0 {
		return errorf(http.StatusConflict, "There is at least one VNF instance using this descriptor")
	}
	for _, nsd := range s.db.nsPackages.records.all() {
		for _, id := range nsd.descriptor.List("vnfd-id") {
			if id == p.descriptorID {
				return errorf(http.StatusConflict, "There is at least one NS package referencing this descriptor")
			}
		}
	}
	return nil
}

// forced tells whether the request says ?FORCE (the NBI takes any value but "false").
func forced(r *http.Request) bool {
	values, given := r.URL.Query()["FORCE"]
	return given && (len(values) == 0 || !strings.EqualFold(values[len(values)-1], "false"))
}

// getPackageContent serves GET .../package_content and .../nsd_content with
// the NBI's Accept rules: the tarball for application/zip or
// application/gzip, the bare descriptor for text/plain when the package
// holds nothing else.
func (s *Server) getPackageContent(c *call, kind *packageKind) (response, *nbiError) {
	p, err := s.findPackage(kind, c.param(0))
	if err != nil {
		return response{}, err
	}
	accept := c.request.Header.Get("Accept")
	acceptText := strings.Contains(accept, "text/plain") || strings.Contains(accept, "*/*")
	archiveType := ""
	switch {
	case strings.Contains(accept, "application/zip") || strings.Contains(accept, "*/*"):
		archiveType = "application/zip"
	case strings.Contains(accept, "application/gzip"):
		archiveType = "application/gzip"
	}
	manyFiles := p.topEntries >= 2
	switch {
	case !acceptText && archiveType == "":
		return response{}, errorf(http.StatusNotAcceptable, "provide request header 'Accept' with 'application/zip' or 'text/plain'")
	case acceptText && !manyFiles:
		content, err := tarballFile(p.tarball, p.pkgDir+"/"+p.descriptorPath)
		if err != nil {
			return response{}, errorf(http.StatusInternalServerError, "cannot read the descriptor: %v", err)
		}
		return response{status: http.StatusOK, contentType: "text/plain", body: [][]byte{content}}, nil
	case archiveType == "":
		return response{}, errorf(http.StatusNotAcceptable, "Packages that contains several files need to be retrieved with 'application/zip'Accept header")
	}
	return response{status: http.StatusOK, contentType: archiveType, body: [][]byte{p.tarball}}, nil
}

// topLevelEntries counts what the package folder holds directly, leaving
// out checksums.txt, as the NBI does to tell one-file packages.
func topLevelEntries(files []string) int {
	seen := map[string]bool{}
	for _, file := range files {
		top, _, _ := strings.Cut(file, "/")
		if top != "checksums.txt" {
			seen[top] = true
		}
	}
	return len(seen)
}

// readDescriptor reads the descriptor file of a checked tarball into an
// ordered object, out of its envelope (the NBI's _remove_envelop): the
// content of vnfd, or the only element of nsd.nsd.
func readDescriptor(tarball []byte, contents *osmpkg.Contents) (*python.Dict, error) {
	data, err := tarballFile(tarball, contents.Name+"/"+contents.DescriptorPath)
	if err != nil {
		return nil, err
	}
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, err
	}
	value, err := python.FromYAML(&node)
	if err != nil {
		return nil, err
	}
	root, _ := value.(*python.Dict)
	for _, key := range []string{"etsi-nfv-vnfd:vnfd", "vnfd", "etsi-nfv-nsd:nsd", "nsd"} {
		if body := root.Obj(key); body != nil {
			root = body
			break
		}
	}
	if list := root.List("nsd"); len(list) == 1 {
		if nsd, ok := list[0].(*python.Dict); ok {
			return nsd, nil
		}
	}
	if root == nil {
		return nil, errors.New("the descriptor is not a map")
	}
	return root, nil
}

// tarballFile returns the content of the file at name in a .tar.gz.
func tarballFile(tarball []byte, name string) ([]byte, error) {
	unzipped, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return nil, err
	}
	archive := tar.NewReader(unzipped)
	for {
		header, err := archive.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s is not in the package", name)
		}
		if err != nil {
			return nil, err
		}
		if path.Clean(strings.TrimPrefix(header.Name, "./")) == name && header.Typeflag == tar.TypeReg {
			return io.ReadAll(io.LimitReader(archive, osmpkg.MaxPackageBytes))
		}
	}
}
