package tidemq

// awsRegions are the regions AWS serves, in all its partitions (aws,
// aws-cn, aws-us-gov, aws-eusc and the isolated ones), as the AWS SDK for
// Go v2 lists them (internal/endpoints/awsrulesfn/partitions.json),
// without the "-global" pseudo-regions.
var awsRegions = map[string]bool{
	"af-south-1": true, "ap-east-1": true, "ap-east-2": true, "ap-northeast-1": true, "ap-northeast-2": true,
	"ap-northeast-3": true, "ap-south-1": true, "ap-south-2": true, "ap-southeast-1": true, "ap-southeast-2": true,
	"ap-southeast-3": true, "ap-southeast-4": true, "ap-southeast-5": true, "ap-southeast-6": true,
	"ap-southeast-7": true, "ca-central-1": true, "ca-west-1": true, "eu-central-1": true, "eu-central-2": true,
	"eu-north-1": true, "eu-south-1": true, "eu-south-2": true, "eu-west-1": true, "eu-west-2": true,
	"eu-west-3": true, "il-central-1": true, "me-central-1": true, "me-south-1": true, "me-west-1": true,
	"mx-central-1": true, "sa-east-1": true, "sa-west-1": true, "us-east-1": true, "us-east-2": true,
	"us-west-1": true, "us-west-2": true,
	"cn-north-1": true, "cn-northwest-1": true,
	"eusc-de-east-1": true,
	"us-gov-east-1":  true, "us-gov-west-1": true,
	"us-iso-east-1": true, "us-iso-west-1": true, "us-isob-east-1": true, "us-isob-west-1": true,
	"eu-isoe-west-1": true, "us-isof-east-1": true, "us-isof-south-1": true,
}

// AWSRegion reports whether name is a region AWS serves. A request signed
// for another region is refused as AWS refuses it (SignatureDoesNotMatch,
// "Credential should be scoped to a valid region"), unless the operator
// names the regions it serves (tidemq serve --regions): each region is a
// namespace of queues, and a client must not be able to make new ones at
// will.
func AWSRegion(name string) bool { return awsRegions[name] }
